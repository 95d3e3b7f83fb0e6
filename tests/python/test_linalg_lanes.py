"""builtin:blocked's batches of tiny matrices across vector lanes (src/kernels/cpu/linalg_lanes.h): inv, solve,
cholesky, lu_factor, det and slogdet at n = 1..8 (the lanes) and 9..10 (past the hand-over to the per-matrix
code) against NumPy and LAPACK's pivots; each lane against the per-matrix code on the same matrix (failing,
NaN and singular ones included); infos and error texts naming the batch element; non-contiguous batches;
float32 / float64; the generic variant under ATEN_CPU_CAPABILITY=default. Complex inputs never take the path
(builtin:blocked is real only), so they are not covered here."""

import numpy as np
import pytest

import backplane
import backplane.linalg as LA
from backplane import backends
from conftest import run_python

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")

BLOCKED = "builtin:blocked"
HAVE_LAPACK = any(i.name == "lapack:getrf" and i.available for i in backends.list_implementations("linalg"))
# A batch of 17: elements 0..15 fill whole groups at every width (2, 4 or 8 matrices), element 16 is always
# left to the per-matrix code.
TAIL = 16
BATCH = TAIL + 1
REAL = [np.float32, np.float64]


def forced(impl=BLOCKED):
    return backends.implementations("linalg", impl)


def T(x):
    return backplane.asarray(x)


def eps(dtype):
    return float(np.finfo(dtype).eps)


def gaussian(shape, seed, dtype):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def spd(batch, n, seed, dtype):
    g = np.random.default_rng(seed).standard_normal((batch, n, n))
    return (g @ np.swapaxes(g, -1, -2) + n * np.eye(n)).astype(dtype)


def assert_close_per_matrix(got, want, a, dtype, factor=64):
    """|got - want| per matrix within factor * n * eps * cond(A) of |want|'s size (NumPy's f64 answer)."""
    got = np.asarray(got, np.float64)
    n = a.shape[-1]
    cond = np.linalg.cond(a.astype(np.float64))
    scale = np.maximum(1.0, np.abs(want).reshape(len(a), -1).max(axis=1))
    err = np.abs(got - want).reshape(len(a), -1).max(axis=1) / scale
    bound = factor * n * eps(dtype) * cond
    assert (err <= bound).all(), (err / bound).max()


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", range(1, 11))
def test_inv_solve_det_against_numpy(dtype, n):
    a = gaussian((37, n, n), n, dtype)  # no diagonal shift: the pivots land everywhere
    b = gaussian((37, n, 3), n + 100, dtype)
    a64 = a.astype(np.float64)
    with forced():
        assert_close_per_matrix(LA.inv(T(a)).numpy(), np.linalg.inv(a64), a, dtype)
        assert_close_per_matrix(LA.solve(T(a), T(b)).numpy(), np.linalg.solve(a64, b.astype(np.float64)), a, dtype)
        det = LA.det(T(a)).numpy()
        want = np.linalg.det(a64)
        assert np.all(np.abs(det - want) <= 64 * n * eps(dtype) * np.linalg.cond(a64) * np.abs(want))
        sign, logabs = (x.numpy() for x in LA.slogdet(T(a)))
        ws, wl = np.linalg.slogdet(a64)
        assert np.array_equal(sign, ws.astype(dtype))
        assert np.allclose(logabs, wl, atol=64 * n * eps(dtype) * np.linalg.cond(a64).max())


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", range(1, 11))
def test_cholesky_against_numpy(dtype, n):
    a = spd(37, n, n, dtype)
    with forced():
        L, info = LA.cholesky_ex(T(a))
    assert not info.numpy().any()
    assert np.allclose(L.numpy(), np.linalg.cholesky(a.astype(np.float64)), rtol=0, atol=50 * n * eps(dtype) * n)
    assert np.array_equal(np.triu(L.numpy(), 1), np.zeros_like(a))


@pytest.mark.skipif(not HAVE_LAPACK, reason="no LAPACK in this build")
@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 9])
def test_lu_factor_pivots_are_lapacks(dtype, n):
    a = gaussian((40, n, n), 7 * n, dtype)
    with forced():
        lu, piv = (x.numpy() for x in LA.lu_factor(T(a)))
    with forced("lapack:getrf"):
        lu_l, piv_l = (x.numpy() for x in LA.lu_factor(T(a)))
    assert np.array_equal(piv, piv_l)
    assert np.allclose(lu, lu_l, rtol=1e3 * n * eps(dtype), atol=1e3 * n * eps(dtype))


def per_matrix_twin(a, i):
    """a with its element i copied into the element the per-matrix code runs (TAIL)."""
    a = a.copy()
    a[TAIL] = a[i]
    return a


def same_twin(x, i, dtype):
    """Lane result i against the per-matrix result of the same matrix: NaN where it is NaN, close elsewhere."""
    x = np.asarray(x)
    assert np.array_equal(np.isnan(x[i]), np.isnan(x[TAIL]))
    ok = ~np.isnan(x[i])
    assert np.allclose(x[i][ok], x[TAIL][ok], rtol=1e3 * eps(dtype), atol=1e3 * eps(dtype))


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", [1, 3, 4, 8])
def test_singular_and_nan_lanes_match_the_per_matrix_code(dtype, n):
    a = gaussian((BATCH, n, n), n, dtype)
    a[2, :, n - 1] = 0  # singular: U[n, n] == 0
    a[5, :, 0] = 0  # singular at the first pivot
    a[9, n // 2, n // 2] = np.nan
    for i in (2, 5, 9):
        twin = per_matrix_twin(a, i)
        with forced():
            lu, piv, info = (x.numpy() for x in LA.lu_factor_ex(T(twin)))
            inv, inv_info = (x.numpy() for x in LA.inv_ex(T(twin)))
            x, solve_info = (x.numpy() for x in LA.solve_ex(T(twin), T(np.ones((BATCH, n, 2), dtype))))
        assert info[i] == info[TAIL] and inv_info[i] == inv_info[TAIL] and solve_info[i] == solve_info[TAIL]
        assert np.array_equal(piv[i], piv[TAIL])
        same_twin(lu, i, dtype)
        if info[i] == 0:  # the inverse and solution of a singular matrix are whatever the divisions gave
            same_twin(inv, i, dtype)
            same_twin(x, i, dtype)
    with forced():
        _, info = LA.inv_ex(T(a))
    assert info.numpy()[2] == n and info.numpy()[5] == 1
    assert info.numpy()[[0, 1, 3, 4, 6, 7, 8, 10]].tolist() == [0] * 8


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", [2, 4, 8])
def test_failing_cholesky_lanes_match_the_per_matrix_code(dtype, n):
    a = spd(BATCH, n, n, dtype)
    a[3, 1, 1] = -10.0  # the leading minor of order 2 fails
    a[6, n - 1, n - 1] = -1.0  # the last one fails
    a[11, 0, 0] = np.nan
    for i, order in ((3, 2), (6, n), (11, 1)):
        twin = per_matrix_twin(a, i)
        with forced():
            L, info = (x.numpy() for x in LA.cholesky_ex(T(twin)))
        assert info[i] == order and info[TAIL] == order
        same_twin(L, i, dtype)  # the columns after the failing one keep the input, as potrf leaves them
    with forced():
        _, info = LA.cholesky_ex(T(a))
    assert info.numpy().tolist() == [0, 0, 0, 2, 0, 0, n, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("dtype", REAL)
def test_errors_name_the_batch_element_inside_a_group(dtype):
    a = gaussian((BATCH, 4, 4), 1, dtype) + 4 * np.eye(4, dtype=dtype)
    a[6, :, 1] = 0
    a[13, :, 3] = 0
    with forced():
        with pytest.raises(LA.LinAlgError) as e:
            LA.inv(T(a))
        assert str(e.value) == ("linalg.inv: (Batch element 6): The diagonal element 2 is zero, the inversion could "
                                "not be completed because the input matrix is singular.")
        with pytest.raises(LA.LinAlgError, match=r"^torch.linalg.solve: \(Batch element 6\): The solver failed"):
            LA.solve(T(a), T(np.ones((BATCH, 4, 1), dtype)))
        with pytest.raises(LA.LinAlgError, match=r"^torch.linalg.lu_factor: \(Batch element 6\): U\[2,2\] is zero"):
            LA.lu_factor(T(a))
        s = spd(BATCH, 4, 2, dtype)
        s[10, 2, 2] = -5.0
        with pytest.raises(LA.LinAlgError) as e:
            LA.cholesky(T(s))
        assert str(e.value) == ("linalg.cholesky: (Batch element 10): The factorization could not be completed "
                                "because the input is not positive-definite (the leading minor of order 3 is not "
                                "positive-definite).")


@pytest.mark.parametrize("dtype", REAL)
def test_non_contiguous_batches(dtype):
    n = 4
    big = gaussian((2 * BATCH, n, n), 3, dtype)
    view = np.swapaxes(big[::2], -1, -2)  # every other matrix, each transposed: no dense layout
    s = spd(2 * BATCH, n, 4, dtype)[1::2]
    with forced():
        assert_close_per_matrix(LA.inv(T(view)).numpy(), np.linalg.inv(view.astype(np.float64)), view, dtype)
        L = LA.cholesky(T(s)).numpy()
        assert np.allclose(L, np.linalg.cholesky(s.astype(np.float64)), atol=200 * eps(dtype))
        b = np.swapaxes(gaussian((BATCH, 2, n), 4, dtype), -1, -2)
        x = LA.solve(T(view), T(b)).numpy()
        assert_close_per_matrix(x, np.linalg.solve(view.astype(np.float64), b.astype(np.float64)), view, dtype)


def test_lu_solve_across_lanes():
    a = gaussian((BATCH, 6, 6), 5, np.float64)
    b = gaussian((BATCH, 6, 3), 6, np.float64)
    with forced():
        lu, piv = LA.lu_factor(T(a))
        x = LA.lu_solve(lu, piv, T(b)).numpy()
    assert_close_per_matrix(x, np.linalg.solve(a, b), a, np.float64)


def test_generic_variant_under_the_capability_cap():
    code = (
        "import numpy as np, backplane, backplane.linalg as LA\n"
        "from backplane import backends\n"
        "rng = np.random.default_rng(0)\n"
        "for dt in (np.float32, np.float64):\n"
        "    a = rng.standard_normal((37, 5, 5)).astype(dt); a[9, :, 2] = 0\n"
        "    with backends.implementations('linalg', 'builtin:blocked'):\n"
        "        x, info = LA.inv_ex(backplane.asarray(a))\n"
        "        lu, piv = LA.lu_factor_ex(backplane.asarray(a))[:2]\n"
        "    with backends.implementations('linalg', 'ref:any'):\n"
        "        piv_ref = LA.lu_factor_ex(backplane.asarray(a))[1].numpy()\n"
        "    ok = np.arange(37) != 9\n"
        "    r = np.abs(x.numpy()[ok] @ a[ok] - np.eye(5)).max()\n"
        "    print(backends.cpu.get_cpu_capability(), info.numpy()[9], int(np.array_equal(piv.numpy(), piv_ref)),"
        " r < (1e-3 if dt == np.float32 else 1e-10))\n")
    lines = run_python(code, env={"ATEN_CPU_CAPABILITY": "default"}).stdout.splitlines()
    assert lines == ["DEFAULT 3 1 True", "DEFAULT 3 1 True"], lines


def test_cpu_order_for_large_inverses_follows_the_gemm_kernels():
    # builtin:blocked leads inv / solve of n >= 128 only where its GEMM has the AVX-512 kernels (Note [Linalg CPU
    # order]); under the cap "avx2" the LAPACK row leads, and tiny batches stay on builtin:blocked either way.
    code = (
        "import numpy as np; from backplane import backends\n"
        "print(backends.explain('linalg.inv', np.eye(256, dtype=np.float32)).chosen)\n"
        "print(backends.explain('linalg.inv', np.zeros((9, 4, 4), np.float32)).chosen)\n")
    lines = run_python(code, env={"ATEN_CPU_CAPABILITY": "avx2"}).stdout.splitlines()
    assert lines == ["lapack:getrf" if HAVE_LAPACK else "builtin:blocked", "builtin:blocked"], lines
