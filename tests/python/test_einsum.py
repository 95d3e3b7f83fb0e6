"""backplane.einsum against NumPy on random equations (hypothesis, seeded; float and complex),
every implementation forced; the sublist form; bad equations; the native
path optimisers against opt_einsum's own costs (a table generated once with
opt_einsum, tests/python/data/gen_einsum_opt_costs.py); get_opt_einsum()'s
contract_path; the flags that choose the path; explain's notes."""

import json
import pathlib
import string

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, seed, strategies as st, HealthCheck

import backplane
from backplane import backends

IMPLS = ["path:matmul", "ref:any"]
RNG = np.random.default_rng(0)
TABLE = json.loads((pathlib.Path(__file__).parent / "data" / "einsum_opt_costs.json").read_text())["entries"]

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def rand(shape, dtype=np.float64):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def crand(shape, dtype=np.complex128):
    return (RNG.uniform(-1, 1, size=shape) + 1j * RNG.uniform(-1, 1, size=shape)).astype(dtype)


def close(got, want, tol):
    wide = np.complex128 if np.iscomplexobj(want) else np.float64
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    assert np.iscomplexobj(got) == np.iscomplexobj(want)
    got, want = got.astype(wide), np.asarray(want, wide)
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    assert np.abs(got - want).max(initial=0) / scale <= tol


# ---------------------------------------------------------------- random equations

@st.composite
def equations(draw):
    """An equation with 1-4 operands over a few labels, some repeated in an
    operand (diagonals), some size-1 dimensions (broadcasting), sometimes an
    ellipsis (broadcast inside it too), implicit or explicit output."""
    letters = draw(st.lists(st.sampled_from("abcdeXY"), min_size=1, max_size=5, unique=True))
    size = {c: draw(st.integers(1, 4)) for c in letters}
    n = draw(st.integers(1, 4))
    ell = draw(st.booleans())
    ell_shape = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)) if ell else []
    terms, shapes = [], []
    for _ in range(n):
        term = draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3))
        shape = [1 if size[c] > 1 and draw(st.integers(0, 5)) == 0 and term.count(c) == 1 else size[c] for c in term]
        if ell and draw(st.booleans()):
            k = draw(st.integers(0, len(ell_shape)))
            sub = [1 if draw(st.integers(0, 3)) == 0 else d for d in ell_shape[len(ell_shape) - k:]]
            at = draw(st.integers(0, len(term)))
            term = term[:at] + ["..."] + term[at:]
            shape = shape[:at] + sub + shape[at:]
        terms.append("".join(term))
        shapes.append(tuple(shape))
    used = sorted({c for t in terms for c in t if c != "."})
    if draw(st.booleans()) or not used:
        out = None
    else:
        out = "".join(draw(st.lists(st.sampled_from(used), max_size=3, unique=True)))
        if any("..." in t for t in terms) and draw(st.booleans()):
            out = "..." + out
    eq = ",".join(terms) + ("" if out is None else "->" + out)
    return eq, shapes


def numpy_einsum(eq, ops):
    """NumPy's answer; PyTorch sums ellipsis dimensions an explicit output omits, NumPy refuses them."""
    if "->" in eq and "..." in eq.split("->")[0] and "..." not in eq.split("->")[1]:
        lhs, rhs = eq.split("->")
        full = np.einsum(lhs + "->..." + rhs, *ops)
        return full.reshape((-1,) + full.shape[full.ndim - len(rhs):]).sum(axis=0)
    return np.einsum(eq, *ops)


# Complex operands multiply as they are (no conjugation), as torch.einsum.
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("make", [rand, crand], ids=["float64", "complex128"])
@seed(17)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=equations())
def test_random_equations_match_numpy(impl, make, problem):
    eq, shapes = problem
    ops = [make(s) for s in shapes]
    want = numpy_einsum(eq, ops)
    with backends.implementations("einsum", impl):
        out = backplane.einsum(eq, *ops)
    assert out.dtype == ops[0].dtype.name
    close(out, want, 1e-12)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 2e-2), (ml_dtypes.bfloat16, 4e-2)])
def test_each_dtype(impl, dtype, tol):
    cases = [("ij,jk->ik", [(7, 5), (5, 9)]), ("bij,bjk,bkl->bli", [(3, 4, 5), (3, 5, 6), (3, 6, 2)]),
             ("ii,i->i", [(6, 6), (6,)]), ("...ij,jk", [(2, 3, 4), (4, 5)]), ("i,j->ji", [(4,), (3,)])]
    with backends.implementations("einsum", impl):
        for eq, shapes in cases:
            ops = [rand(s, dtype) for s in shapes]
            out = backplane.einsum(eq, *ops)
            assert out.dtype == np.dtype(dtype).name
            close(out, np.einsum(eq, *[np.asarray(o, np.float64) for o in ops]), tol)


@pytest.mark.parametrize("impl", IMPLS)
def test_odd_sizes_and_strided_views(impl):
    a = rand((13, 17)).T                 # transposed
    b = rand((13, 22))[:, ::2]           # every other column
    c = rand((11, 9))[::-1]              # reversed rows
    d = np.broadcast_to(rand((1, 9)), (5, 9))  # a stride-0 dimension
    with backends.implementations("einsum", impl):
        for eq, ops in [("ij,jk->ik", (a, b)), ("ji,jk,kl->il", (a.T, b, c)), ("ij,kj->ik", (d, c)),
                        ("ab,bc,cd,de->ea", (a, b, c, d.T))]:
            close(backplane.einsum(eq, *[backplane.asarray(o) for o in ops]), np.einsum(eq, *ops), 1e-12)


@pytest.mark.parametrize("impl", IMPLS)
def test_nan_and_inf(impl):
    a = rand((4, 5)); a[1, 2] = np.nan; a[3, 0] = np.inf
    b = rand((5, 3))
    with backends.implementations("einsum", impl):
        got = backplane.einsum("ij,jk->ik", a, b).numpy()
    want = np.einsum("ij,jk->ik", a, b)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], atol=1e-12)


# ---------------------------------------------------------------- complex

@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype,tol", [(np.complex64, 1e-5), (np.complex128, 1e-12)])
def test_complex_odd_sizes_diagonals_broadcasting_and_views(impl, dtype, tol):
    a = crand((13, 17), dtype).T                 # transposed
    b = crand((13, 22), dtype)[:, ::2]           # every other column: no unit stride
    c = crand((11, 9), dtype)[::-1]              # reversed rows
    d = np.broadcast_to(crand((1, 9), dtype), (5, 9))  # a stride-0 dimension
    cases = [("ij,jk->ik", (a, b)), ("ji,jk,kl->il", (a.T, b, c)), ("ij,kj->ik", (d, c)),
             ("ab,bc,cd,de->ea", (a, b, c, d.T)),
             ("bij,bjk,bkl->bli", (crand((3, 4, 5), dtype), crand((3, 5, 7), dtype), crand((3, 7, 2), dtype))),
             ("...ii,...i->...i", (crand((2, 3, 6, 6), dtype), crand((3, 6), dtype))),   # diagonal, ellipsis
             ("iij,jk->k", (crand((5, 5, 3), dtype), crand((3, 7), dtype))),            # a trace
             ("ij,ij->", (crand((7, 9), dtype), crand((7, 9), dtype))),                 # a dot product
             ("i,j->ij", (crand((4,), dtype), crand((6,), dtype))),                     # an outer product
             ("...j,j...->...", (crand((2, 1, 5), dtype), crand((5, 3), dtype))),       # size-1 broadcasting
             ("bn,anm,bm->ba", (crand((3, 4), dtype), crand((5, 4, 6), dtype), crand((3, 6), dtype)))]
    with backends.implementations("einsum", impl):
        for eq, ops in cases:
            out = backplane.einsum(eq, *[backplane.asarray(o) for o in ops])
            assert out.dtype == np.dtype(dtype).name
            close(out, np.einsum(eq, *[o.astype(np.complex128) for o in ops]), tol)


def test_complex_explain_says_which_matmul_ran():
    ops = [crand((6, 5), np.complex64), crand((5, 7), np.complex64), crand((7, 3), np.complex64)]
    row = backends.explain("matmul", ops[0], ops[1])
    notes = backends.explain("einsum", "ij,jk,kl->il", *ops).notes
    steps = [n for n in notes if n.startswith("step ")]
    assert len(steps) == 2 and all(("-> " + row.chosen + " (") in n for n in steps)
    assert "ref:any contracts left to right in complex128 loops" in notes[-1]
    with backends.implementations("matmul", "ref:any"):
        steps = [n for n in backends.explain("einsum", "ij,jk,kl->il", *ops).notes if n.startswith("step ")]
        assert all("-> ref:any (" in n for n in steps)
        close(backplane.einsum("ij,jk,kl->il", *ops), np.linalg.multi_dot(ops), 1e-5)
    loops = backends.explain("einsum", "i,j->ij", crand((3,)), crand((4,))).notes
    assert any("elementwise product (loops)" in n for n in loops)


def test_chain_uses_the_path_and_matches():
    ops = [rand((40, 30)), rand((30, 50)), rand((50, 2)), rand((2, 60))]
    close(backplane.einsum("ab,bc,cd,de->ae", *ops), np.linalg.multi_dot(ops), 1e-12)


def test_empty_dimensions():
    out = backplane.einsum("ij,jk->ik", np.zeros((3, 0)), np.zeros((0, 4)))
    assert out.shape == (3, 4) and not np.asarray(out.numpy()).any()
    assert backplane.einsum("ij->i", np.zeros((0, 5))).shape == (0,)


# ---------------------------------------------------------------- sublist form

def test_sublist_form():
    a, b = rand((2, 3)), rand((3, 4))
    close(backplane.einsum(a, [0, 1], b, [1, 2], [0, 2]), a @ b, 1e-12)
    close(backplane.einsum(a, [0, 1], b, [1, 2]), a @ b, 1e-12)  # implicit output
    x = rand((5, 2, 3))
    close(backplane.einsum(x, [..., 0, 1], b, [1, 2], [..., 0, 2]), x @ b, 1e-12)
    close(backplane.einsum(x, [Ellipsis, 26, 27], [Ellipsis, 27]), np.einsum("...ab->...b", x), 1e-12)


def test_sublist_form_errors():
    a = rand((2, 3))
    with pytest.raises(ValueError, match=r"\[0, 52\)"):
        backplane.einsum(a, [0, 60])
    with pytest.raises(ValueError, match="sublist"):
        backplane.einsum(a, a)
    with pytest.raises(ValueError, match="two sublists in a row"):
        backplane.einsum(a, [0, 1], [0], [1])
    with pytest.raises(ValueError, match="lists of ints are sublists"):
        backplane.einsum("i", [1, 2])


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("eq,shapes,fragment", [
    ("ij,j1->i", [(2, 3), (3, 1)], "'1' at index 4 of 'ij,j1->i'"),
    ("i.j", [(2, 3)], "'.' at index 1"),
    ("...i...", [(2, 3)], "a second '...' at index 4"),
    ("ij->k", [(2, 3)], "'k' at index 4"),
    ("ij->ii", [(2, 3)], "'i' again at index 5"),
    ("ij,jk", [(2, 3)], "1 operand for 'ij,jk'"),
    ("ij,jk", [(2, 3), (3, 4, 5)], "operand 1 (subscripts at index 3"),
    ("ij,jk", [(2, 3), (4, 5)], "subscript 'j'"),
    ("ii", [(2, 3)], "repeated in operand 0"),
    ("...i,...i", [(2, 3), (4, 3)], "covered by '...'"),
])
def test_bad_equations_name_the_position(eq, shapes, fragment):
    with pytest.raises(ValueError) as info:
        backplane.einsum(eq, *[rand(s) for s in shapes])
    assert isinstance(info.value, RuntimeError)  # PyTorch raises RuntimeError
    assert fragment in str(info.value) and str(info.value).startswith("einsum:")


def test_bad_operands():
    with pytest.raises(RuntimeError, match="operands of one dtype"):
        backplane.einsum("ij,jk", rand((2, 2), np.float32), rand((2, 2)))
    with pytest.raises(RuntimeError, match="operand 1 of dtype float64 and operand 0 of complex128"):
        backplane.einsum("ij,jk", crand((2, 2)), rand((2, 2)))  # mixed dtypes: convert first
    with pytest.raises(RuntimeError, match="operand 1 of dtype complex128 and operand 0 of complex64"):
        backplane.einsum("ij,jk", crand((2, 2), np.complex64), crand((2, 2)))
    with pytest.raises(RuntimeError, match="float16, bfloat16, float32, float64, complex64 or complex128 tensors"):
        backplane.einsum("ij", np.ones((2, 2), np.int32))
    with pytest.raises(RuntimeError, match="at least one operand"):
        backplane.einsum("")
    with pytest.raises(RuntimeError, match="sublist"):  # not a string: the sublist form, as torch.einsum
        backplane.einsum(3, rand((2,)))


# ---------------------------------------------------------------- paths against opt_einsum

oe = backends.opt_einsum.get_opt_einsum()


@pytest.mark.parametrize("strategy", ["auto", "greedy", "optimal", "dp", "branch-1", "branch-2", "branch-all"])
def test_paths_cost_no_more_than_opt_einsums(strategy):
    entries = [e for e in TABLE if e["optimize"] == strategy]
    assert entries
    for e in entries:
        shapes = [tuple(s) for s in e["shapes"]]
        path, info = oe.contract_path(e["equation"], *shapes, optimize=strategy, memory_limit=e["memory_limit"])
        assert info.opt_cost <= e["opt_cost"] * (1 + 1e-12), (e["equation"], e["memory_limit"], path, e["path"])
        assert info.naive_cost == e["naive_cost"]


def test_cost_model_is_opt_einsums():
    """opt_einsum's own paths, costed by us, cost what opt_einsum said."""
    for e in TABLE[::3]:
        shapes = [tuple(s) for s in e["shapes"]]
        _, info = oe.contract_path(e["equation"], *shapes, optimize=[tuple(p) for p in e["path"]])
        assert info.opt_cost == e["opt_cost"]
        assert info.largest_intermediate == e["largest_intermediate"]


# ---------------------------------------------------------------- the native module

def test_get_opt_einsum_is_native_and_always_there():
    assert backends.opt_einsum.is_available()
    assert oe is not None and "dp" in oe.paths
    a, b, c = rand((8, 64)), rand((64, 64)), rand((64, 2))
    path, info = oe.contract_path("ab,bc,cd->ad", a, b, c)  # arrays
    assert path == [(1, 2), (0, 1)]
    assert path == oe.contract_path("ab,bc,cd->ad", (8, 64), (64, 64), (64, 2))[0]  # shapes
    assert path == oe.contract_path("ab,bc,cd->ad", [8, 64], [64, 64], [64, 2], shapes=True)[0]
    assert path == oe.contract_path(a, [0, 1], b, [1, 2], c, [2, 3], [0, 3])[0]  # interleaved
    text = str(info)
    for line in ("Complete contraction:  ab,bc,cd->ad", "Naive scaling:  4", "Optimized scaling:  3",
                 "Naive FLOP count:  1.966e+05", "Optimized FLOP count:  1.843e+04", "Largest intermediate:  1.280e+02"):
        assert line in text
    assert info.opt_cost == 18432 and info.naive_cost == 196608 and info.scale_list == [3, 3]
    assert info.contraction_list[0][2] == "cd,bc->db"
    assert oe.contract_path("ab,bc,cd->ad", a, b, c, optimize=False)[0] == [(0, 1, 2)]
    # The report is built on first read (PathInfo), from the path the search found:
    # the same whichever attribute comes first, and other names still raise.
    _, fresh = oe.contract_path("ab,bc,cd->ad", a, b, c)
    assert fresh.contraction_list == info.contraction_list and str(fresh) == text
    assert fresh.size_list == info.size_list and fresh.strategy == info.strategy
    with pytest.raises(AttributeError):
        fresh.no_such_field
    _, none_info = oe.contract_path("ab,bc,cd->ad", a, b, c, optimize=False)
    assert len(none_info.contraction_list) == 1 and none_info.scale_list == [4]
    assert oe.contract_path("ab,bc,cd->ad", a, b, c, optimize=[(0, 1), (0, 1)])[1].opt_cost == 2 * 8 * 64 * 64 + 2 * 8 * 64 * 2


def test_contract_path_reads_every_kind_of_operand_alike():
    """contract_path reads tuples, lists and .shape natively, and anything else
    (NumPy ints or floats as dims with shapes=True, objects without a shape)
    in Python: every way gives the same path and report attributes, and the
    errors are the same as before."""
    a, b, c = rand((8, 64)), rand((64, 64)), rand((64, 2))
    want_path, want = oe.contract_path("ab,bc,cd->ad", a, b, c, optimize="greedy")
    attrs = ("path", "strategy", "eq", "shapes", "naive_cost", "opt_cost", "speedup", "largest_intermediate",
             "input_subscripts", "output_subscript")
    for operands, kw in [(((8, 64), [64, 64], (64, 2)), {}),
                         ((np.array([8, 64]), (np.int64(64), 64), [64.0, 2]), {"shapes": True}),
                         ((a, (64, 64), c), {})]:
        path, info = oe.contract_path("ab,bc,cd->ad", *operands, optimize="greedy", **kw)
        assert path == want_path
        for name in attrs:
            assert getattr(info, name) == getattr(want, name), name
        assert info.shapes == [(8, 64), (64, 64), (64, 2)] and info.eq == "ab,bc,cd->ad"
        assert info.scale_list == want.scale_list and str(info) == str(want)
    with pytest.raises(TypeError, match="contract_path operand"):
        oe.contract_path("ab,bc->ac", (2, 3), object())
    with pytest.raises(TypeError, match="contract_path operand"):
        oe.contract_path("ab,bc->ac", (2, 3), (3, True))  # not a shape, and no .shape


def test_contract_path_memory_limit_and_errors():
    shapes = [(10, 10, 10), (10, 10, 10), (10, 10)]
    _, info = oe.contract_path("abc,bcd,da->", *shapes, memory_limit="max_input")
    assert info.largest_intermediate <= 1000
    with pytest.raises(ValueError, match="memory_limit"):
        oe.contract_path("ab,bc->ac", (2, 3), (3, 4), memory_limit=0)
    with pytest.raises(ValueError, match="optimize"):
        oe.contract_path("ab,bc->ac", (2, 3), (3, 4), optimize="auto-hq")
    with pytest.raises(ValueError, match="einsum contract_path path"):
        oe.contract_path("ab,bc->ac", (2, 3), (3, 4), optimize=[(0, 2)])
    with pytest.raises(ValueError, match="subscript 'b'"):
        oe.contract_path("ab,bc->ac", (2, 3), (4, 4))


def test_path_cache_is_shared_and_bounded():
    oe.cache_clear()
    shapes = [(3, 4), (4, 5), (5, 6)]
    oe.contract_path("ab,bc,cd->ad", *shapes, optimize="greedy")
    oe.contract_path("ab,bc,cd->ad", *shapes, optimize="greedy")
    info = oe.cache_info()
    assert (info["size"], info["hits"], info["misses"]) == (1, 1, 1)
    backplane.einsum("xy,yz,zw->xw", *[rand(s) for s in shapes])  # same network through einsum
    oe.set_cache_max_size(1)
    oe.contract_path("ab,bc,cd->ad", (2, 2), (2, 2), (2, 2))
    assert oe.cache_info()["size"] == 1
    with pytest.raises(ValueError):
        oe.set_cache_max_size(-1)
    oe.set_cache_max_size(1024)


def _random_network(n, seed):
    """A connected random network of n operands (a chain plus extra labels),
    sizes 2 or 3 so that contracting it stays cheap."""
    rng = np.random.default_rng(seed)
    letters = iter(string.ascii_letters)
    terms = [[] for _ in range(n)]
    edges = [(i, i + 1) for i in range(n - 1)] + [tuple(rng.choice(n, 2, replace=False)) for _ in range(n // 2)]
    sizes = {}
    for a, b in edges:
        c = next(letters)
        sizes[c] = int(rng.integers(2, 4))
        terms[a].append(c)
        terms[b].append(c)
    out = next(letters)
    sizes[out] = 3
    terms[int(rng.integers(n))].append(out)
    eq = ",".join("".join(t) for t in terms) + "->" + out
    return eq, [tuple(sizes[c] for c in t) for t in terms]


@pytest.mark.parametrize("n,seed", [(18, 1), (20, 2), (24, 3)])
def test_auto_on_large_networks_gives_a_valid_path_and_numpys_result(n, seed):
    """Networks of 18-24 operands (where auto mostly samples greedy paths): its path names operands
    that exist at each step and leaves one, costs no more than greedy's, and
    einsum along it gives NumPy's result."""
    eq, shapes = _random_network(n, seed)
    path, info = oe.contract_path(eq, *shapes, optimize="auto")
    left = n
    for step in path:
        assert len(step) in (1, 2) and len(set(step)) == len(step) and all(0 <= p < left for p in step), path
        left -= len(step) - 1
    assert left == 1
    assert info.opt_cost <= oe.contract_path(eq, *shapes, optimize="greedy")[1].opt_cost
    ops = [rand(s) for s in shapes]
    with backends.opt_einsum.flags(enabled=True, strategy="auto"):
        got = backplane.einsum(eq, *ops)
    close(got, np.einsum(eq, *ops, optimize="greedy"), 1e-10)


@pytest.mark.parametrize("n", [17, 18, 20])
def test_auto_stays_within_a_fifth_of_dp_and_is_deterministic(n):
    """Beyond dp's budget auto samples greedy paths from a fixed seed and re-plans
    them: on these seeded networks its cost is within 1.2x dp's (the cheapest
    path without outer products), and a fresh search (no path cache) gives the
    same path."""
    oe.set_cache_max_size(0)
    try:
        for seed in range(4):
            eq, shapes = _random_network(n, 100 * n + seed)
            path, info = oe.contract_path(eq, *shapes, optimize="auto")
            dp = oe.contract_path(eq, *shapes, optimize="dp")[1].opt_cost
            assert info.opt_cost <= 1.2 * dp, (eq, info.opt_cost / dp)
            assert oe.contract_path(eq, *shapes, optimize="auto")[0] == path
    finally:
        oe.set_cache_max_size(1024)


# ---------------------------------------------------------------- flags and explain

def test_strategy_flag_takes_the_additions_and_validates():
    for s in ("dp", "branch-1", "branch-2", "branch-all", "auto"):
        backends.opt_einsum.strategy = s
        assert backends.opt_einsum.strategy == s
    with pytest.raises(ValueError, match="must be one of the following"):
        backends.opt_einsum.strategy = "auto-hq"


def _note(*ops, eq="ab,bc,cd->ad"):
    return backends.explain("einsum", eq, *ops).notes


def test_flags_choose_the_path_and_explain_shows_it():
    ops = [rand((2, 30)), rand((30, 30)), rand((30, 1))]
    notes = _note(*ops)
    assert any("'auto': optimal" in n and "[(1, 2), (0, 1)]" in n for n in notes), notes
    assert any(n.startswith("step 1: ") and "matmul batch=1" in n and "-> builtin" in n for n in notes), notes
    with backends.opt_einsum.flags(enabled=False):
        notes = _note(*ops)
        assert any("left to right" in n and "[(0, 1), (0, 1)]" in n for n in notes), notes
        close(backplane.einsum("ab,bc,cd->ad", *ops), ops[0] @ ops[1] @ ops[2], 1e-12)
    with backends.opt_einsum.flags(strategy="greedy"):
        assert any("'greedy': greedy" in n for n in _note(*ops))


def test_explain_and_cli_come_from_the_declaration():
    table = backends.explain("einsum", "bij,bjk->bik", rand((2, 3, 4)), rand((2, 4, 5)))
    assert table.chosen == "path:matmul"
    assert [r.implementation for r in table] == ["path:matmul", "ref:any"]
    assert backplane.einsum.__doc__.startswith("Einstein summation")
