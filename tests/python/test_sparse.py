"""backplane.sparse (2:4 semi-structured weights) against a float64 NumPy
oracle written apart from the kernels: pruning, compression round trips, the
documented layout, every implementation of the op "sparse" forced, odd
shapes, strided activations, NaN/Inf, precision, bad input."""

import ml_dtypes
import numpy as np
import pytest

import backplane
from backplane import backends, sparse
from conftest import run_python

IMPLS = [i.name for i in backends.list_implementations("sparse") if i.available]
DTYPES = {"float32": (np.float32, 2e-6), "bfloat16": (ml_dtypes.bfloat16, 8e-3), "float16": (np.float16, 1e-3),
          "float64": (np.float64, 1e-13)}
# (out, in, n): k off the kernels' 4/8/64/128 steps, odd m and n, one row, tiles and tails.
SHAPES = [(1, 1, 1), (3, 5, 2), (8, 8, 1), (7, 13, 5), (33, 70, 17), (65, 131, 129), (4, 256, 130), (130, 9, 64)]
RNG = np.random.default_rng(19)

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def rand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def prune_oracle(w):
    """Keeps the 2 largest magnitudes of each group of 4 columns (NaN largest, ties to the lower column)."""
    w = np.asarray(w)
    out = np.zeros_like(w)
    for j in range(w.shape[0]):
        for c0 in range(0, w.shape[1], 4):
            group = [(c, float(w[j, c])) for c in range(c0, min(c0 + 4, w.shape[1]))]
            key = [(0 if np.isnan(v) else 1, -abs(v) if not np.isnan(v) else 0.0, c) for c, v in group]
            for _, _, c in sorted(key)[:2]:
                out[j, c] = w[j, c]
    return out


def decode_layout(packed, meta, rows, cols):
    """The dense weight from values + meta as docs describe them (Note [2:4 CPU layout])."""
    packed, codes = np.asarray(packed.numpy()), np.asarray(meta.numpy()).view(np.uint8)
    groups = (cols + 7) // 8 * 2
    assert packed.shape == (rows, 2 * groups) and codes.shape == (rows, groups // 2)
    dense = np.zeros((rows, 4 * groups), packed.dtype)
    for j in range(rows):
        for g in range(groups):
            code = (int(codes[j, g // 2]) >> (4 * (g % 2))) & 15
            first, second = code & 3, code >> 2
            assert first < second
            dense[j, 4 * g + first] = packed[j, 2 * g]
            dense[j, 4 * g + second] = packed[j, 2 * g + 1]
    assert not np.any(dense[:, cols:].astype(np.float64))  # padding stores zeros
    return dense[:, :cols]


def oracle(x, w_pruned, bias=None):
    """sum over the nonzero entries of each weight row of w * x, in float64 (0 * inf never enters)."""
    x = np.asarray(x, np.float64).reshape(-1, w_pruned.shape[1])
    w = np.asarray(w_pruned, np.float64)
    stored = w != 0
    out = np.empty((x.shape[0], w.shape[0]))
    for j in range(w.shape[0]):
        cols = np.nonzero(stored[j])[0]
        out[:, j] = (x[:, cols] * w[j, cols]).sum(axis=1) if len(cols) else 0.0
    if bias is not None:
        out += np.asarray(bias, np.float64)
    return out


def close(got, want, tol, k):
    got = np.asarray(got.numpy(), np.float64)
    assert got.shape == want.shape
    finite = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    scale = max(1.0, float(np.abs(want[finite]).max(initial=0)))
    assert np.abs(got[finite] - want[finite]).max(initial=0) / scale <= tol * max(1.0, np.sqrt(k))


def dense_weight(out, k, dtype):
    """A random weight whose every group keeps exactly 2 nonzeros (so stored == nonzero)."""
    return prune_oracle(rand((out, k), dtype) + np.asarray(np.sign(rand((out, k))) * 0.01, dtype))


# ---------------------------------------------------------------- pruning and compression


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_prune_keeps_the_two_largest_magnitudes_of_every_group(dtype):
    np_dtype, _ = DTYPES[dtype]
    for shape in [(1, 1), (3, 5), (4, 8), (6, 13), (9, 30)]:
        w = rand(shape, np_dtype)
        got = sparse.prune_semi_structured(w).numpy()
        assert got.dtype == w.dtype
        np.testing.assert_array_equal(got, prune_oracle(w))


def test_prune_ties_nan_and_inf():
    w = np.array([[1, -1, 1, -1, 0, 0, 0, 0, 5, np.nan, -np.inf, 7]], np.float32)
    got = sparse.prune_semi_structured(w).numpy()
    want = np.array([[1, -1, 0, 0, 0, 0, 0, 0, 0, np.nan, -np.inf, 0]], np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_compression_round_trips_and_follows_the_documented_layout(dtype):
    np_dtype, _ = DTYPES[dtype]
    for rows, cols in [(1, 1), (2, 3), (3, 4), (5, 8), (4, 9), (7, 17), (16, 64), (3, 70)]:
        w = dense_weight(rows, cols, np_dtype)
        w[0, : min(cols, 4)] = 0  # an empty group
        if cols >= 8:
            w[-1, 4:8] = np.asarray([0, 0, 0, 3], np_dtype)  # a group of one nonzero
        ws = sparse.to_sparse_semi_structured(w)
        assert ws.shape == (rows, cols) and ws.dtype == dtype and ws.t().shape == (cols, rows)
        np.testing.assert_array_equal(ws.to_dense().numpy(), w)
        np.testing.assert_array_equal(ws.t().to_dense().numpy(), w.T)
        np.testing.assert_array_equal(decode_layout(ws.packed, ws.meta, rows, cols), w)


def test_prune_true_is_prune_then_compress():
    w = rand((6, 22))
    ws = sparse.to_sparse_semi_structured(w, prune=True)
    np.testing.assert_array_equal(ws.to_dense().numpy(), prune_oracle(w))


def test_compression_of_a_strided_weight():
    base = dense_weight(8, 24, np.float32)
    view = backplane.asarray(np.ascontiguousarray(base.T)).T  # a transposed view of the same values
    np.testing.assert_array_equal(sparse.to_sparse_semi_structured(view).to_dense().numpy(), base)


def test_validation_names_the_first_group_with_more_than_two_nonzeros():
    w = dense_weight(4, 12, np.float32)
    w[1, 4:8] = [1, 2, 0, 3]
    w[2, 0:4] = [1, 1, 1, 1]  # later in row order: not the one reported
    with pytest.raises(ValueError, match=r"3 nonzeros in row 1, columns 4\.\.7") as e:
        sparse.to_sparse_semi_structured(w)
    assert "prune=True" in str(e.value)
    nan = np.zeros((1, 6), np.float32)
    nan[0, 4:6] = [np.nan, 1]
    nan[0, 0:3] = [np.nan, 0, 1]
    sparse.to_sparse_semi_structured(nan)  # NaN counts as one nonzero: 2 per group is fine
    nan[0, 1] = 2
    with pytest.raises(ValueError, match=r"3 nonzeros in row 0, columns 0\.\.3"):
        sparse.to_sparse_semi_structured(nan)
    tail = np.ones((2, 7), np.float32)
    tail[:, :4] = [1, 0, 0, 1]
    with pytest.raises(ValueError, match=r"3 nonzeros in row 0, columns 4\.\.6"):
        sparse.to_sparse_semi_structured(tail)


@pytest.mark.parametrize("bad, what", [
    (np.ones(4, np.float32), "2-D"),
    (np.ones((2, 2, 4), np.float32), "2-D"),
    (np.ones((2, 4), np.int32), "float32, bfloat16, float16 or float64"),
    (np.ones((2, 4), np.int8), "int8 2:4 products are cuSPARSELt"),
])
def test_bad_weights_raise_naming_what_is_allowed(bad, what):
    for fn in (sparse.to_sparse_semi_structured, sparse.prune_semi_structured):
        with pytest.raises(ValueError, match=what):
            fn(bad)


# ---------------------------------------------------------------- products


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_every_implementation_matches_the_float64_oracle(impl, dtype):
    np_dtype, tol = DTYPES[dtype]
    with backends.implementations("sparse", impl):
        for out, k, n in SHAPES:
            w = dense_weight(out, k, np_dtype)
            ws = sparse.to_sparse_semi_structured(w)
            x = rand((n, k), np_dtype)
            table = backends.explain("linear", x, ws)
            assert table.op == "sparse"
            if table.chosen is None:  # the sparse24 kernels take no float64: they say so, and the call says why
                assert dtype == "float64" and impl.startswith("sparse24:")
                assert table.row(impl).status == "rejected" and "float64" in table.row(impl).reasons[0]
                with pytest.raises(backends.NoImplementationError):
                    backplane.nn.functional.linear(x, ws)
                return
            assert table.chosen == impl, str(table)
            close(backplane.nn.functional.linear(x, ws), oracle(x, w), tol, k)
            b = rand((k, n), np_dtype)
            close(backplane.matmul(ws, b), oracle(b.T, w).T, tol, k)
            close(ws @ b, oracle(b.T, w).T, tol, k)
            close(backplane.matmul(x, ws.t()), oracle(x, w), tol, k)
            close(x @ ws.t() if isinstance(x, backplane.Tensor) else backplane.asarray(x) @ ws.t(), oracle(x, w), tol, k)
            bias = rand((out,), np_dtype)
            close(backplane.nn.functional.linear(x, ws, bias), oracle(x, w, bias), tol, k)


@pytest.mark.parametrize("impl", IMPLS)
def test_strided_and_batched_activations(impl):
    w = dense_weight(19, 40, np.float32)
    ws = sparse.to_sparse_semi_structured(w)
    wide = rand((23, 80))
    with backends.implementations("sparse", impl):
        strided = backplane.asarray(wide)[:, ::2]  # no unit stride along k
        close(backplane.nn.functional.linear(strided, ws), oracle(wide[:, ::2], w), 2e-6, 40)
        transposed = backplane.asarray(np.ascontiguousarray(wide[:, :40].T)).T  # unit stride along n
        close(backplane.nn.functional.linear(transposed, ws), oracle(wide[:, :40], w), 2e-6, 40)
        batched = rand((2, 3, 40))
        got = backplane.nn.functional.linear(batched, ws)
        assert got.shape == (2, 3, 19)
        close(got, oracle(batched, w).reshape(2, 3, 19), 2e-6, 40)
        b = backplane.asarray(wide).T[::2, :]  # [40, 23] with strides (2*?, 1)
        close(backplane.matmul(ws, b), oracle(wide[:, ::2], w).T, 2e-6, 40)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_nan_and_inf_propagate_from_stored_entries_only(impl, dtype):
    np_dtype, tol = DTYPES[dtype]
    if impl.startswith("sparse24:") and dtype == "float64":
        return  # rejected (test_every_implementation_matches_the_float64_oracle)
    w = dense_weight(9, 20, np_dtype)
    w[3, np.nonzero(w[3])[0][0]] = np.nan   # row 3 of the weight: NaN everywhere
    w[5, np.nonzero(w[5])[0][1]] = np.inf   # row 5: inf (or NaN where x is 0... x never is)
    x = rand((6, 20), np_dtype)
    pruned_col = np.nonzero(w[0] == 0)[0][0]
    x[1, pruned_col] = np.inf  # under a pruned entry of row 0: no effect there
    x[2, np.nonzero(w[7])[0][0]] = np.nan  # under a stored entry of row 7
    ws = sparse.to_sparse_semi_structured(w)
    with backends.implementations("sparse", impl):
        got = backplane.nn.functional.linear(x, ws)
    want = oracle(x, w)
    assert np.isfinite(want[1, 0]) and np.isnan(want[2, 7]) and np.isnan(want[0, 3])
    if impl == "dense:matmul":
        # the dense fallback multiplies the pruned zeros too: 0 * inf is NaN there, as in a dense product
        with np.errstate(invalid="ignore"):
            want = np.asarray(x, np.float64) @ np.asarray(w, np.float64).T
        assert np.isnan(want[1, 0])
    close(got, want, tol, 20)


def test_empty_problems():
    ws = sparse.to_sparse_semi_structured(dense_weight(5, 12, np.float32))
    assert backplane.nn.functional.linear(np.zeros((0, 12), np.float32), ws).shape == (0, 5)
    empty_k = sparse.to_sparse_semi_structured(np.zeros((3, 0), np.float32))
    bias = np.array([1, 2, 3], np.float32)
    got = backplane.nn.functional.linear(np.zeros((2, 0), np.float32), empty_k, bias).numpy()
    np.testing.assert_array_equal(got, np.tile(bias, (2, 1)))


@pytest.mark.skipif("sparse24:cpu" not in IMPLS, reason="needs AVX-512")
def test_medium_precision_lets_sparse24_multiply_f32_in_bf16():
    w = dense_weight(32, 256, np.float32)
    ws = sparse.to_sparse_semi_structured(w)
    x = rand((40, 256))
    want = oracle(x, w)
    with backends.implementations("sparse", "sparse24:cpu"):
        exact = np.abs(backplane.nn.functional.linear(x, ws).numpy() - want).max()
        backplane.set_float32_matmul_precision("medium")
        table = backends.explain("linear", x, ws)
        reduced = np.abs(backplane.nn.functional.linear(x, ws).numpy() - want).max()
    assert exact < 1e-4
    bf16_hardware = any(i.name == "builtin:avx512_bf16" and i.available for i in backends.list_implementations("matmul"))
    if bf16_hardware:
        assert any("multiplies in bf16" in n for n in table.notes)
        assert 1e-4 < reduced < 0.1  # bf16 operands: visibly rounded, still close
    else:
        assert reduced == exact


def avx512_hardware():
    return any(i.name == "builtin:avx512" and i.available for i in backends.list_implementations("matmul"))


def test_explain_lists_every_implementation_and_why():
    ws = sparse.to_sparse_semi_structured(dense_weight(8, 16, np.float32))
    table = backends.explain("linear", rand((4, 16)), ws)
    names = [r.implementation for r in table]
    assert names == ["cusparselt:spmma", "sparse24:cpu", "sparse24:avx2", "dense:matmul", "ref:any"]
    spmma = table.row("cusparselt:spmma")
    assert spmma.status in ("not built", "not available") and spmma.reasons
    assert table.op == "sparse" and table.problem.startswith("out=8 in=16 n=4 f32")
    if avx512_hardware():  # the AVX-512 kernel first, the AVX2 one behind it
        assert table.chosen == "sparse24:cpu" and table.row("sparse24:avx2").status == "acceptable"
    else:  # an AVX2 machine: the AVX-512 row says which instructions it lacks
        avx512 = table.row("sparse24:cpu")
        assert avx512.status == "not available" and "AVX-512" in avx512.reasons[0]
        assert table.chosen == "sparse24:avx2"
    with backends.implementations("sparse", "ref"):
        assert backends.explain("linear", rand((4, 16)), ws).chosen == "ref:any"
    f64 = backends.explain("linear", rand((4, 16), np.float64), sparse.to_sparse_semi_structured(
        dense_weight(8, 16, np.float64)))
    assert f64.chosen == "dense:matmul" and "float64" in f64.row("sparse24:avx2").reasons[0]


CAPPED = (
    "import numpy as np, backplane\n"
    "from backplane import sparse, backends\n"
    "rng = np.random.default_rng(3)\n"
    "w = sparse.to_sparse_semi_structured(rng.uniform(-1, 1, (8, 16)).astype(np.float32), prune=True)\n"
    "x = rng.uniform(-1, 1, (4, 16)).astype(np.float32)\n"
    "t = backends.explain('linear', x, w)\n"
    "print(t.chosen)\n"
    "for name in ('sparse24:cpu', 'sparse24:avx2'):\n"
    "    print(name, '|', t.row(name).status, '|', t.row(name).reasons)\n"
    "got = backplane.nn.functional.linear(x, w).numpy()\n"
    "want = x.astype(np.float64) @ w.to_dense().numpy().astype(np.float64).T\n"
    "print('error', float(np.abs(got - want).max()))\n"
)


@pytest.mark.skipif("sparse24:avx2" not in IMPLS, reason="needs AVX2")
def test_a_cpu_capability_capped_at_avx2_takes_the_avx2_kernel():
    lines = run_python(CAPPED, env={"ATEN_CPU_CAPABILITY": "avx2"}).stdout.splitlines()
    assert lines[0] == "sparse24:avx2"
    avx512 = lines[1]
    # rejected by the cap on an AVX-512 machine, not available on an AVX2 one: either way, it says why
    assert "rejected" in avx512 and "capability" in avx512 or "not available" in avx512 and "AVX-512" in avx512
    assert float(lines[3].split()[1]) < 1e-5


def test_a_capped_cpu_capability_falls_back_to_the_dense_path():
    # the dense fallback (decompression + the matmul dispatcher) runs on every CPU
    lines = run_python(CAPPED, env={"ATEN_CPU_CAPABILITY": "default"}).stdout.splitlines()
    assert lines[0] == "dense:matmul"
    assert "capability" in lines[2] and ("rejected" in lines[2] or "not available" in lines[2])
    assert float(lines[3].split()[1]) < 1e-5


KERNELS = [i for i in IMPLS if i.startswith("sparse24:")]
# (out, in, n) at the AVX2 kernel's edges: 1-3 rows of X (row dots: 8 stored entries per step, a last
# pair of groups when in/4 groups is not a multiple of 4), 4-8 (panels of 8, 12 rows of W per tile),
# 9-16 (16 and 6), more (24 and 4, several panels, a partial one); rows of W past a tile and past a
# block of 256; k-blocks of 64 and 128 groups and their tails; in padded to a multiple of 8.
KERNEL_SHAPES = [(5, 8, 1), (3, 24, 1), (13, 1000, 1), (7, 1030, 2), (9, 5, 3), (14, 513, 3), (25, 40, 4),
                 (13, 517, 5), (12, 16, 8), (7, 260, 9), (13, 1024, 16), (5, 33, 17), (9, 256, 24), (11, 258, 25),
                 (257, 72, 49), (4, 8, 100)]


def tile_edge_case(i, out, k, n, np_dtype):
    """Shape i of a tile-edge list: the weight (one group emptied), its sparse form, the activations' wide
    buffer, the activations as NumPy sees them and as Backplane gets them (strided every other shape: the
    scalar packing)."""
    w = dense_weight(out, k, np_dtype)
    if out > 2:
        w[2, : min(k, 4)] = 0  # an empty group stores zeros
    ws = sparse.to_sparse_semi_structured(w)
    wide = rand((n, 2 * k), np_dtype)
    xs = wide[:, ::2] if i % 2 else wide[:, :k]
    x = backplane.asarray(wide)[:, ::2] if i % 2 else backplane.asarray(wide[:, :k])
    return w, ws, wide, xs, x


@pytest.mark.parametrize("impl", KERNELS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_kernels_at_their_tile_edges(impl, dtype):
    np_dtype, tol = DTYPES[dtype]
    with backends.implementations("sparse", impl):
        for i, (out, k, n) in enumerate(KERNEL_SHAPES):
            w, ws, wide, xs, x = tile_edge_case(i, out, k, n, np_dtype)
            want = oracle(xs, w)
            assert backends.explain("linear", x, ws).chosen == impl
            close(backplane.nn.functional.linear(x, ws), want, tol, k)
            close(backplane.matmul(ws, backplane.asarray(wide[:, :k]).T), oracle(wide[:, :k], w).T, tol, k)


@pytest.mark.parametrize("impl", KERNELS)
@pytest.mark.parametrize("n", [1, 2, 3, 8, 16, 30])
def test_kernels_take_nan_and_inf_from_stored_entries_only(impl, n):
    w = dense_weight(11, 36, np.float32)
    w[3, np.nonzero(w[3])[0][-1]] = np.nan
    w[5, np.nonzero(w[5])[0][0]] = -np.inf
    w[7] = np.where(w[0] == 0, np.float32(0.5), np.float32(0))  # row 7 stores what row 0 prunes
    x = rand((n, 36))
    x[:, np.nonzero(w[0] == 0)[0]] = np.inf  # under every pruned entry of row 0: no effect there
    x[n - 1, np.nonzero(w[7])[0][-1]] = np.nan  # under a stored entry of row 7 (a pruned one of row 0)
    with backends.implementations("sparse", impl):
        got = backplane.nn.functional.linear(x, sparse.to_sparse_semi_structured(w))
    want = oracle(x, w)
    assert np.isfinite(want[:, 0]).all() and np.isnan(want[:, 3]).all() and np.isnan(want[n - 1, 7])
    close(got, want, 2e-6, 36)


# ---------------------------------------------------------------- the AVX-512 kernels' own paths


def avx512_bf16_hardware():
    return any(i.name == "builtin:avx512_bf16" and i.available for i in backends.list_implementations("matmul"))


def bf16_round(a):
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)


# (out, in, n) at the edges of sparse24:cpu's bf16 kernel (sparse24_avx512_bf16.cpp): n from 4 (fewer
# take the row dots) past its tiles of 4 rows of X; out past its 16-row vectors and 64-row tiles; in
# across its chunks of 8 groups (32 columns, one load of a row of X) and the meta tail of a row whose
# g / 2 bytes are not a multiple of 4 (in = 8, 40, 100, 1000); and the f32 kernel's k-blocks of 32
# groups (in = 128 .. 264) and bands of 2 MiB of packed X (257 x 1100 x 520: 9 panels of 64).
AVX512_SHAPES = [(1, 8, 4), (16, 32, 5), (17, 33, 7), (15, 40, 8), (63, 100, 9), (64, 64, 4), (65, 129, 13),
                 (130, 264, 6), (33, 1000, 17), (3, 7, 12), (257, 1100, 520)]


@pytest.mark.skipif("sparse24:cpu" not in IMPLS, reason="needs AVX-512")
@pytest.mark.parametrize("dtype", ["bfloat16", "medium", "float32"])
def test_avx512_kernels_against_the_rounded_operands(dtype):
    """bf16 products are exact in fp32: the oracle is float64 on the bf16-rounded operands, so the
    tolerance is the fp32 accumulation's ("medium", f32 output) or the output's rounding (bf16)."""
    medium = dtype == "medium"
    if dtype != "float32" and not avx512_bf16_hardware():
        pytest.skip("needs AVX512_BF16")
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32
    tol = 8e-3 if dtype == "bfloat16" else 2e-6
    with backends.implementations("sparse", "sparse24:cpu"):
        if medium:
            backplane.set_float32_matmul_precision("medium")
        for i, (out, k, n) in enumerate(AVX512_SHAPES):
            w, ws, wide, xs, x = tile_edge_case(i, out, k, n, np_dtype)
            rounded = bf16_round if medium else (lambda a: np.asarray(a, np.float64))
            want = oracle(rounded(xs), rounded(w))
            close(backplane.nn.functional.linear(x, ws), want, tol, k)
            # matmul(W, b) writes C transposed (columns of W's rows 16 apart): the scalar store
            close(backplane.matmul(ws, backplane.asarray(wide[:, :k]).T), oracle(rounded(wide[:, :k]), rounded(w)).T,
                  tol, k)
        if medium:  # without the permission: fp32 products, a different (exact) result
            backplane.set_float32_matmul_precision("highest")
            w = dense_weight(70, 260, np.float32)
            x = rand((9, 260))
            close(backplane.nn.functional.linear(x, sparse.to_sparse_semi_structured(w)), oracle(x, w), 2e-6, 260)


@pytest.mark.skipif("sparse24:cpu" not in IMPLS, reason="needs AVX-512")
@pytest.mark.parametrize("dtype", ["bfloat16", "medium"])
@pytest.mark.parametrize("n", [4, 5, 9, 40])
def test_avx512_bf16_kernel_takes_nan_and_inf_from_stored_entries_only(dtype, n):
    if not avx512_bf16_hardware():
        pytest.skip("needs AVX512_BF16")
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32
    w = dense_weight(70, 72, np_dtype)
    w[3, np.nonzero(w[3])[0][-1]] = np.nan
    w[5, np.nonzero(w[5])[0][0]] = -np.inf
    w[67] = np.where(w[0] == 0, np_dtype(0.5), np_dtype(0))  # row 67 (the second tile) stores what row 0 prunes
    x = rand((n, 72), np_dtype)
    x[:, np.nonzero(w[0] == 0)[0]] = np.inf  # under every pruned entry of row 0: no effect there
    x[n - 1, np.nonzero(w[67])[0][-1]] = np.nan  # under a stored entry of row 67
    with backends.implementations("sparse", "sparse24:cpu"):
        if dtype == "medium":
            backplane.set_float32_matmul_precision("medium")
        got = backplane.nn.functional.linear(x, sparse.to_sparse_semi_structured(w))
    want = oracle(bf16_round(x), bf16_round(w))
    assert np.isfinite(want[:, 0]).all() and np.isnan(want[:, 3]).all() and np.isnan(want[n - 1, 67])
    close(got, want, 8e-3 if dtype == "bfloat16" else 2e-6, 72)


@pytest.mark.skipif("sparse24:cpu" not in IMPLS, reason="needs AVX-512")
@pytest.mark.parametrize("n", [1, 2, 3])
def test_avx512_few_rows_take_the_row_dots_in_fp32(n):
    """1-3 rows of X take the AVX2 kernel's row dots, fp32 products even where "medium" permits bf16."""
    w = dense_weight(37, 300, np.float32)
    x = rand((n, 300))
    with backends.implementations("sparse", "sparse24:cpu"):
        backplane.set_float32_matmul_precision("medium")
        got = backplane.nn.functional.linear(x, sparse.to_sparse_semi_structured(w))
    close(got, oracle(x, w), 2e-6, 300)


def test_the_avx2_kernel_is_exact_in_fp32_whatever_the_precision():
    if "sparse24:avx2" not in IMPLS:
        pytest.skip("needs AVX2")
    w = dense_weight(16, 256, np.float32)
    ws = sparse.to_sparse_semi_structured(w)
    x = rand((40, 256))
    with backends.implementations("sparse", "sparse24:avx2"):
        exact = backplane.nn.functional.linear(x, ws).numpy()
        backplane.set_float32_matmul_precision("medium")  # no bf16 path here: AVX2 has no bf16 dot product
        assert np.array_equal(backplane.nn.functional.linear(x, ws).numpy(), exact)
    assert np.abs(exact - oracle(x, w)).max() < 1e-4


# ---------------------------------------------------------------- bad input


def test_bad_products_raise_clear_errors():
    w = dense_weight(6, 16, np.float32)
    ws = sparse.to_sparse_semi_structured(w)
    with pytest.raises(ValueError, match="in_features 16, got 15"):
        backplane.nn.functional.linear(rand((3, 15)), ws)
    with pytest.raises(ValueError, match="b's first dimension equal to the 2:4 weight's in_features 16, got 8"):
        backplane.matmul(ws, rand((8, 3)))
    with pytest.raises(ValueError, match="first operand .* transposed"):
        backplane.matmul(rand((3, 16)), ws)  # not transposed
    with pytest.raises(ValueError, match="weight only"):
        backplane.nn.functional.linear(ws, rand((3, 16)))
    with pytest.raises(ValueError, match="one dtype"):
        backplane.nn.functional.linear(rand((3, 16), np.float16), ws)
    with pytest.raises(ValueError, match="1-D bias of 6 elements"):
        backplane.nn.functional.linear(rand((3, 16)), ws, rand((5,)))
    with pytest.raises(ValueError, match="expected no SparseSemiStructuredTensor"):
        backplane.addmm(rand((6, 3)), ws, rand((16, 3)))
    # the raw entries check the compressed form itself
    with pytest.raises(ValueError, match=r"expected values \[out, 12\].*got values of shape \[6, 8\] for 17 input features"):
        sparse.semi_structured_linear(rand((3, 17)), ws.packed, ws.meta)  # 9..16 columns make 4 groups, 17 make 6
    with pytest.raises(ValueError, match="int8 meta"):
        sparse.semi_structured_linear(rand((3, 16)), ws.packed, ws.packed)
    with pytest.raises(ValueError, match="2-D b"):
        sparse.semi_structured_mm(ws.packed, ws.meta, rand((16,)))


def test_cusparselt_module_answers_for_this_build():
    info = {r.name: r for r in backends.list_backends()} if hasattr(backends, "list_backends") else {}
    if not backends.cusparselt.is_available():
        assert backends.cusparselt.version() is None
        assert backends.cusparselt.get_max_alg_id() is None
    else:
        v = backends.cusparselt.version()
        assert v is None or v > 0
    assert isinstance(info, dict)


@pytest.mark.parametrize("impl", KERNELS)
@pytest.mark.parametrize("dtype, m", [("float32", 2100), ("bfloat16", 1400)])
def test_large_activations_take_the_panel_major_or_banded_order(impl, dtype, m):
    # packed X above 8 MiB: sparse24:cpu walks panels of X outermost, sparse24:avx2 bands of panels
    # that fit in 8 MiB (sparse24_blocking.h): 2100 rows of 1024 f32 make two bands
    np_dtype, tol = DTYPES[dtype]
    w = dense_weight(7, 1024, np_dtype)
    x = rand((m, 1024), np_dtype)
    with backends.implementations("sparse", impl):
        close(backplane.nn.functional.linear(x, sparse.to_sparse_semi_structured(w)), oracle(x, w), tol, 1024)
