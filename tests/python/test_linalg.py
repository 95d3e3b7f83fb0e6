"""backplane.linalg against NumPy and float64 identities (A inv(A) = I, L L^H = A,
Q orthonormal, U S V^H = A, A v = w v), every implementation forced: random,
ill-conditioned, singular, non-square, batched, broadcast, non-contiguous and
complex inputs, the recursive kernels' leaf edges (32), PyTorch's error texts and
the _ex infos; the precision knob's effect on builtin:blocked; explain."""

import numpy as np
import pytest

import backplane
from backplane import backends
import backplane.linalg as LA

RNG = np.random.default_rng(0)
AVAILABLE = {i.name for i in backends.list_implementations("linalg") if i.available}


def impls(*names):
    return [n for n in names if n in AVAILABLE]


CHOL = impls("builtin:blocked", "lapack:potrf", "ref:any")
LU = impls("builtin:blocked", "lapack:getrf", "ref:any")
QR = impls("lapack:geqrf", "ref:any")
EIGH = impls("lapack:syevd", "ref:any")
SVD = impls("lapack:gesdd", "ref:any")
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
REAL = [np.float32, np.float64]

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def forced(impl):
    return backends.implementations("linalg", impl)


def claims(impl, dtype):
    return impl != "builtin:blocked" or np.dtype(dtype) in (np.float32, np.float64)


def rand(shape, dtype=np.float64):
    x = RNG.uniform(-1, 1, shape)
    if np.iscomplexobj(np.zeros(1, dtype)):
        x = x + 1j * RNG.uniform(-1, 1, shape)
    return x.astype(dtype)


def hpd(shape, dtype=np.float64):
    """Hermitian positive-definite matrices (well conditioned)."""
    a = rand(shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def close(got, want, t):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    err = float(np.abs(got.astype(np.complex128) - want.astype(np.complex128)).max(initial=0)) / scale
    assert err <= t, err


def H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def T(x):
    return backplane.asarray(x)


# ---------------------------------------------------------------- Cholesky


@pytest.mark.parametrize("impl", CHOL)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (31, 31), (32, 32), (33, 33), (70, 70), (3, 2, 9, 9)])
def test_cholesky(impl, dtype, shape):
    if not claims(impl, dtype):
        pytest.skip("builtin:blocked is real only")
    a = hpd(shape, dtype)
    with forced(impl):
        L = LA.cholesky(T(a)).numpy()
        U = LA.cholesky(T(a), upper=True).numpy()
    close(L, np.linalg.cholesky(a.astype(np.complex128)), tol(dtype) * 10)
    close(L @ H(L), a, tol(dtype) * 10)
    assert np.all(np.triu(L, 1) == 0)
    close(U, H(L), tol(dtype) * 10)
    assert np.all(np.tril(U, -1) == 0)


@pytest.mark.parametrize("impl", CHOL)
def test_cholesky_reads_one_triangle_and_non_contiguous(impl):
    a = hpd((40, 40))
    junk = a.copy()
    junk[np.triu_indices(40, 1)] = 1e6  # only the lower triangle is read
    big = np.zeros((80, 40))
    big[::2] = junk
    with forced(impl):
        L = LA.cholesky(T(big)[::2]).numpy()
        Lt = LA.cholesky(T(np.ascontiguousarray(junk.T)).T).numpy()  # a transposed view
    close(L, np.linalg.cholesky(a), 1e-10)
    close(Lt, np.linalg.cholesky(a), 1e-10)


@pytest.mark.parametrize("impl", CHOL)
def test_cholesky_errors_and_ex(impl):
    a = np.stack([hpd((4, 4)) for _ in range(5)])
    a[3, 1, 1] = -10.0  # leading minor of order 2 fails
    with forced(impl):
        L, info = LA.cholesky_ex(T(a))
        assert info.numpy().tolist() == [0, 0, 0, 2, 0]
        assert info.dtype == "int32"
        close(L.numpy()[0] @ L.numpy()[0].T, a[0], 1e-10)
        with pytest.raises(RuntimeError) as e:
            LA.cholesky(T(a))
        assert str(e.value) == ("linalg.cholesky: (Batch element 3): The factorization could not be completed "
                                "because the input is not positive-definite (the leading minor of order 2 is not "
                                "positive-definite).")
        with pytest.raises(RuntimeError, match=r"^linalg.cholesky_ex: \(Batch element 3\)"):
            LA.cholesky_ex(T(a), check_errors=True)
        with pytest.raises(RuntimeError) as e:
            LA.cholesky(T(a[3]))
        assert str(e.value).startswith("linalg.cholesky: The factorization could not be completed")
        nan = hpd((3, 3))
        nan[0, 0] = np.nan
        L, info = LA.cholesky_ex(T(nan))
        # Ours stop at the NaN pivot (LAPACK 3.x's rule); OpenBLAS's own potrf lets NaN through.
        assert int(info.numpy()) == 1 or (impl == "lapack:potrf" and np.isnan(L.numpy()).any())


@pytest.mark.parametrize("impl", CHOL)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_broadcast(impl, dtype, upper):
    if not claims(impl, dtype):
        pytest.skip("builtin:blocked is real only")
    a = hpd((2, 1, 37, 37), dtype)
    b = rand((3, 37, 5), dtype)
    f = np.linalg.cholesky(a.astype(np.complex128))
    f = (H(f) if upper else f)
    f = (f if np.iscomplexobj(np.zeros(1, dtype)) else f.real).astype(dtype)
    with forced(impl):
        x = backplane.cholesky_solve(T(b), T(f), upper=upper).numpy()
    assert x.shape == (2, 3, 37, 5)
    close(x, np.linalg.solve(a.astype(np.complex128), b.astype(np.complex128)), tol(dtype) * 20)


# ---------------------------------------------------------------- LU, solve, inv, det


@pytest.mark.parametrize("impl", LU)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (6, 6), (33, 33), (65, 65), (40, 25), (25, 40), (4, 3, 7, 7)])
def test_lu(impl, dtype, shape):
    if not claims(impl, dtype):
        pytest.skip("builtin:blocked is real only")
    a = rand(shape, dtype)
    with forced(impl):
        P, L, U = (x.numpy() for x in LA.lu(T(a)))
        LU_, piv = (x.numpy() for x in LA.lu_factor(T(a)))
    k = min(shape[-2:])
    assert L.shape == shape[:-2] + (shape[-2], k) and U.shape == shape[:-2] + (k, shape[-1])
    close(P @ L @ U, a, tol(dtype) * 10)
    assert np.all(np.triu(L, 1) == 0) and np.all(np.tril(U, -1) == 0)
    assert np.allclose(np.diagonal(L, axis1=-2, axis2=-1), 1)
    assert piv.dtype == np.int32 and piv.shape == shape[:-2] + (k,)
    assert np.all(np.abs(np.tril(L, -1)) <= np.sqrt(2) + 1e-6)  # partial pivoting (|re| + |im| for complex)


@pytest.mark.parametrize("impl", LU)
def test_lu_pivots_match_lapack(impl):
    if "lapack:getrf" not in AVAILABLE:
        pytest.skip("no LAPACK")
    a = rand((3, 50, 50))
    with forced("lapack:getrf"):
        want_lu, want_piv = (x.numpy() for x in LA.lu_factor(T(a)))
    with forced(impl):
        lu_, piv = (x.numpy() for x in LA.lu_factor(T(a)))
    assert np.array_equal(piv, want_piv)
    close(lu_, want_lu, 1e-10)


@pytest.mark.parametrize("impl", LU)
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve(impl, dtype):
    if not claims(impl, dtype):
        pytest.skip("builtin:blocked is real only")
    a = rand((2, 1, 45, 45), dtype) + 4 * np.eye(45, dtype=dtype)
    b = rand((3, 45, 4), dtype)
    ref = np.linalg.solve(a.astype(np.complex128), b.astype(np.complex128))
    with forced(impl):
        close(LA.solve(T(a), T(b)), ref, tol(dtype) * 10)
        x, info = LA.solve_ex(T(a), T(b))
        close(x, ref, tol(dtype) * 10)
        assert info.numpy().shape == (2, 3) and not info.numpy().any()
        # X A = B
        bl = rand((4, 45), dtype)
        close(LA.solve(T(a[0, 0]), T(bl), left=False), np.linalg.solve(a[0, 0].T, bl.T).T, tol(dtype) * 10)
        # a vector right-hand side, and a batch of them
        v = rand((45,), dtype)
        close(LA.solve(T(a[0, 0]), T(v)), np.linalg.solve(a[0, 0], v), tol(dtype) * 10)
        vb = rand((2, 1, 45), dtype)
        got = LA.solve(T(a), T(vb)).numpy()
        assert got.shape == (2, 1, 45)
        close(got, np.linalg.solve(a, vb[..., None])[..., 0], tol(dtype) * 10)


@pytest.mark.parametrize("impl", LU)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 32, 33, 90])
def test_inv(impl, dtype, n):
    if not claims(impl, dtype):
        pytest.skip("builtin:blocked is real only")
    a = rand((2, n, n), dtype) + 2 * np.eye(n, dtype=dtype)
    with forced(impl):
        x = LA.inv(T(a)).numpy()
        xe, info = LA.inv_ex(T(a))
    close(a.astype(np.complex128) @ x, np.broadcast_to(np.eye(n), a.shape), tol(dtype) * 50)
    close(x, np.linalg.inv(a.astype(np.complex128)), tol(dtype) * 50)
    close(xe, x, 0)
    assert not info.numpy().any()


@pytest.mark.parametrize("impl", LU)
def test_ill_conditioned(impl):
    n = 9
    hilbert = 1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1)  # cond ~ 5e11
    b = hilbert @ np.ones(n)
    with forced(impl):
        x = LA.solve(T(hilbert), T(b)).numpy()
        inv = LA.inv(T(hilbert)).numpy()
    assert np.abs(hilbert @ x - b).max() < 1e-12  # small residual even when x is inexact
    assert np.abs(x - 1).max() < 1e-3
    assert np.abs(hilbert @ inv - np.eye(n)).max() < 1e-3


@pytest.mark.parametrize("impl", LU)
def test_singular(impl):
    a = np.stack([rand((4, 4)) + 4 * np.eye(4) for _ in range(3)])
    a[1, :, 2] = 0  # column 2 is zero: U[2, 2] == 0
    with forced(impl):
        _, info = LA.inv_ex(T(a))
        assert info.numpy().tolist() == [0, 3, 0]
        with pytest.raises(RuntimeError) as e:
            LA.inv(T(a))
        assert str(e.value) == ("linalg.inv: (Batch element 1): The diagonal element 3 is zero, the inversion could "
                                "not be completed because the input matrix is singular.")
        with pytest.raises(RuntimeError) as e:
            LA.solve(T(a[1]), T(np.ones((4, 1))))
        assert str(e.value) == "torch.linalg.solve: The solver failed because the input matrix is singular."
        _, info = LA.solve_ex(T(a), T(np.ones((4, 1))))
        assert info.numpy().tolist() == [0, 3, 0]
        with pytest.raises(RuntimeError) as e:
            LA.lu_factor(T(a))
        assert str(e.value).startswith("torch.linalg.lu_factor: (Batch element 1): U[3,3] is zero and using it on "
                                       "lu_solve would result in a division by zero.")
        _, _, info = LA.lu_factor_ex(T(a))
        assert info.numpy().tolist() == [0, 3, 0]
        P, L, U = (x.numpy() for x in LA.lu(T(a[1])))  # lu never raises
        close(P @ L @ U, a[1], 1e-12)
        assert float(LA.det(T(a[1])).numpy()) == 0
        sign, logabs = (x.numpy() for x in LA.slogdet(T(a[1])))
        assert sign == 0 and logabs == -np.inf


@pytest.mark.parametrize("impl", LU)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 20])  # 5: builtin's unrolled small-matrix path, which must leave A^H X = B alone
def test_lu_solve(impl, dtype, n):
    if not claims(impl, dtype):
        pytest.skip("builtin:blocked is real only")
    a = rand((3, n, n), dtype) + 3 * np.eye(n, dtype=dtype)
    b = rand((3, n, 2), dtype)
    c = a.astype(np.complex128)
    with forced(impl):
        lu_, piv = LA.lu_factor(T(a))
        close(LA.lu_solve(lu_, piv, T(b)), np.linalg.solve(c, b), tol(dtype) * 10)
        close(LA.lu_solve(lu_, piv, T(b), adjoint=True), np.linalg.solve(H(c), b), tol(dtype) * 10)
        bl = rand((3, 2, n), dtype)
        close(LA.lu_solve(lu_, piv, T(bl), left=False), bl @ np.linalg.inv(c), tol(dtype) * 10)
        close(LA.lu_solve(lu_, piv, T(bl), left=False, adjoint=True), bl @ np.linalg.inv(H(c)), tol(dtype) * 10)


@pytest.mark.parametrize("impl", LU)
@pytest.mark.parametrize("dtype", DTYPES)
def test_det_slogdet(impl, dtype):
    if not claims(impl, dtype):
        pytest.skip("builtin:blocked is real only")
    a = rand((4, 12, 12), dtype) + np.eye(12, dtype=dtype)
    with forced(impl):
        d = LA.det(T(a)).numpy()
        sign, logabs = (x.numpy() for x in LA.slogdet(T(a)))
    ws, wl = np.linalg.slogdet(a.astype(np.complex128))
    close(d / np.linalg.det(a.astype(np.complex128)), np.ones(4), tol(dtype) * 10)
    close(sign, ws, tol(dtype) * 10)
    close(logabs, wl, tol(dtype) * 10)
    assert d.dtype == np.dtype(dtype) and logabs.dtype == np.real(np.zeros(1, dtype)).dtype
    assert float(LA.det(T(np.zeros((0, 0)))).numpy()) == 1.0


# ---------------------------------------------------------------- QR, eigh, SVD


@pytest.mark.parametrize("impl", QR)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 7), (30, 12), (12, 30), (2, 3, 9, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(impl, dtype, shape, mode):
    a = rand(shape, dtype)
    m, n = shape[-2:]
    k = min(m, n)
    with forced(impl):
        Q, R = (x.numpy() for x in LA.qr(T(a), mode=mode))
    rows = m if mode == "complete" else k
    assert R.shape == shape[:-2] + (rows, n)
    assert np.all(np.tril(R, -1) == 0)
    if mode == "r":
        assert Q.shape == (0,)
        close(np.abs(R[..., :k, :]), np.abs(np.linalg.qr(a.astype(np.complex128), mode="r")), tol(dtype) * 10)
        return
    assert Q.shape == shape[:-2] + (m, m if mode == "complete" else k)
    close(Q @ R, a, tol(dtype) * 10)
    close(H(Q) @ Q, np.broadcast_to(np.eye(Q.shape[-1]), Q.shape[:-2] + (Q.shape[-1],) * 2), tol(dtype) * 10)


@pytest.mark.parametrize("impl", EIGH)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(impl, dtype, uplo):
    a = rand((3, 14, 14), dtype)
    a = (a + H(a)) / 2
    junk = a.copy()
    idx = np.triu_indices(14, 1) if uplo == "L" else np.tril_indices(14, -1)
    junk[:, idx[0], idx[1]] = 99  # the other triangle is never read
    with forced(impl):
        w, V = (x.numpy() for x in LA.eigh(T(junk), UPLO=uplo))
        w2 = LA.eigvalsh(T(junk), UPLO=uplo).numpy()
    want = np.linalg.eigvalsh(a.astype(np.complex128))
    close(w, want, tol(dtype) * 10)
    close(w2, want, tol(dtype) * 10)
    assert np.all(np.diff(w, axis=-1) >= -1e-6)
    close(a.astype(np.complex128) @ V, V * w[..., None, :], tol(dtype) * 20)
    close(H(V) @ V, np.broadcast_to(np.eye(14), V.shape), tol(dtype) * 10)
    assert w.dtype == np.real(np.zeros(1, dtype)).dtype


@pytest.mark.parametrize("impl", SVD)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(9, 9), (20, 7), (7, 20), (2, 6, 4)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(impl, dtype, shape, full):
    a = rand(shape, dtype)
    m, n = shape[-2:]
    k = min(m, n)
    with forced(impl):
        U, S, Vh = (x.numpy() for x in LA.svd(T(a), full_matrices=full))
        S2 = LA.svdvals(T(a)).numpy()
    want = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
    close(S, want, tol(dtype) * 10)
    close(S2, want, tol(dtype) * 10)
    assert U.shape == shape[:-2] + (m, m if full else k) and Vh.shape == shape[:-2] + (n if full else k, n)
    close((U[..., :, :k] * S[..., None, :]) @ Vh[..., :k, :], a, tol(dtype) * 10)
    close(H(U) @ U, np.broadcast_to(np.eye(U.shape[-1]), U.shape[:-2] + (U.shape[-1],) * 2), tol(dtype) * 10)
    close(Vh @ H(Vh), np.broadcast_to(np.eye(Vh.shape[-2]), Vh.shape[:-2] + (Vh.shape[-2],) * 2), tol(dtype) * 10)


@pytest.mark.parametrize("impl", SVD)
def test_svd_rank_deficient(impl):
    a = rand((10, 3)) @ rand((3, 8))  # rank 3
    with forced(impl):
        U, S, Vh = (x.numpy() for x in LA.svd(T(a)))
        assert int(LA.matrix_rank(T(a)).numpy()) == 3
    close(U @ H(U), np.eye(10), 1e-10)  # completed to an orthonormal basis
    close(Vh @ H(Vh), np.eye(8), 1e-10)
    close((U[:, :8] * S) @ Vh, a, 1e-10)


def test_matrix_rank_and_pinv():
    a = np.stack([rand((6, 3)) @ rand((3, 5)), rand((6, 5))])
    assert LA.matrix_rank(T(a)).numpy().tolist() == np.linalg.matrix_rank(a).tolist() == [3, 5]
    assert LA.matrix_rank(T(a), atol=1e9).numpy().tolist() == [0, 0]
    close(LA.pinv(T(a)), np.linalg.pinv(a), 1e-10)
    s = a[0] @ a[0].T  # Hermitian, rank 3
    assert int(LA.matrix_rank(T(s), hermitian=True).numpy()) == 3
    close(LA.pinv(T(s), hermitian=True), np.linalg.pinv(s, hermitian=True), 1e-8)
    c = rand((5, 4), np.complex128)
    close(LA.pinv(T(c)), np.linalg.pinv(c), 1e-10)
    with pytest.raises(RuntimeError, match="atol and rtol must be non-negative"):
        LA.matrix_rank(T(a), rtol=-1.0)


# ---------------------------------------------------------------- bad input, explain, knobs


@pytest.mark.parametrize(
    "call, text",
    [
        (lambda: LA.cholesky(T(np.ones((2, 3)))),
         "linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 matrices"),
        (lambda: LA.inv(T(np.ones(3))), "linalg.inv: The input tensor A must have at least 2 dimensions."),
        (lambda: LA.det(T(np.ones((2, 2), np.int64))),
         "linalg.det: Expected a floating point or complex tensor as input. Got Long"),
        (lambda: LA.eigh(T(np.ones((2, 2), np.float16))), "linalg.eigh: Low precision dtypes not supported. Got Half"),
        (lambda: LA.solve(T(np.eye(3)), T(np.ones((4, 2)))),
         "torch.linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x2)"),
        (lambda: LA.solve(T(np.eye(3)), T(np.ones((3, 2), np.float32))),
         "torch.linalg.solve: Expected A and B to have the same dtype, but found A of type Double and B of type "
         "Float instead."),
        (lambda: LA.svd(T(np.eye(3)), driver="gesvdj"),
         "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend."),
        (lambda: LA.lu_factor(T(np.eye(3)), pivot=False),
         "torch.linalg.lu_factor: LU without pivoting is not implemented on the CPU"),
        (lambda: LA.lu_solve(T(np.eye(3)), T(np.ones(3, np.int64)), T(np.ones((3, 1)))),
         "linalg.lu_solve: Expected pivots to be int32, got Long"),
        (lambda: backplane.cholesky_solve(T(np.ones((4, 1))), T(np.eye(3))),
         "Incompatible matrix sizes for cholesky_solve: each L matrix is 3 by 3 but each B matrix is 4 by 1"),
    ],
)
def test_bad_input(call, text):
    # A dtype the routines lack is PyTorch's NotImplementedError; the rest are RuntimeErrors.
    expected = NotImplementedError if text.endswith(("Got Long", "Got Half")) else RuntimeError
    with pytest.raises(expected) as e:
        call()
    assert str(e.value) == text


def test_bad_arguments():
    with pytest.raises(ValueError, match="UPLO"):
        LA.eigh(T(np.eye(2)), UPLO="X")
    with pytest.raises(ValueError, match="mode"):
        LA.qr(T(np.eye(2)), mode="economic")
    with pytest.raises(TypeError):
        LA.cholesky(T(np.eye(2)), True)  # upper is keyword-only
    with pytest.raises(RuntimeError, match="broadcast"):
        LA.solve(T(np.ones((2, 3, 3))), T(np.ones((4, 3, 1))))


def test_blocked_refuses_complex_and_says_why():
    with forced("builtin:blocked"):
        with pytest.raises(RuntimeError) as e:
            LA.inv(T(np.eye(3, dtype=np.complex64)))
    assert "dtype: expected float32 or float64, got complex64" in str(e.value)
    text = str(backends.explain("linalg.qr", T(np.eye(3))))
    assert "builtin:blocked" in text and "routine: expected potrf" in text


def test_explain_and_cli_names_the_routine():
    d = backends.explain("linalg.cholesky", T(hpd((8, 8))))
    text = str(d)
    assert text.splitlines()[0].startswith("linalg: routine=0 batch=1 m=8 n=8")
    for row in ("builtin:blocked", "cusolver:potrf", "cublas:getrf_batched", "magma:any", "ref:any"):
        assert row in text
    assert "not built: MAGMA is not part of Backplane" in text


def test_the_whole_family_is_declared():
    names = {e["name"] for e in backplane._C.op_entries()}
    for fn in ["cholesky", "cholesky_ex", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "solve", "solve_ex", "inv",
               "inv_ex", "det", "slogdet", "qr", "eigh", "eigvalsh", "svd", "svdvals", "matrix_rank", "pinv"]:
        assert "linalg." + fn in names
        assert callable(getattr(LA, fn))
    assert "cholesky_solve" in names and callable(backplane.cholesky_solve)


def test_blocked_precision_knob():
    """Under "medium" (bf16 GEMM updates where the CPU has AVX512_BF16) builtin:blocked stays accurate to
    bf16's level; under "highest" it is fp32-exact."""
    a = hpd((200, 200), np.float32)
    want = np.linalg.cholesky(a.astype(np.float64))
    with forced("builtin:blocked"):
        exact = LA.cholesky(T(a)).numpy()
        with backends.mkldnn.flags(fp32_precision="bf16"):
            medium = LA.cholesky(T(a)).numpy()
    close(exact, want, 2e-5)
    close(medium, want, 2e-2)
    d = str(backends.explain("linalg.cholesky", T(a)))
    assert "builtin:blocked runs its GEMM updates in fp32" in d


def test_large_blocked_matches_lapack():
    if "lapack:getrf" not in AVAILABLE:
        pytest.skip("no LAPACK")
    a = rand((300, 300)) + 10 * np.eye(300)
    s = hpd((300, 300))
    with forced("builtin:blocked"):
        x = LA.inv(T(a)).numpy()
        L = LA.cholesky(T(s)).numpy()
    close(x, np.linalg.inv(a), 1e-12)
    close(L, np.linalg.cholesky(s), 1e-12)


def test_many_small_matrices():
    a = hpd((500, 4, 4))
    for impl in CHOL:
        with forced(impl):
            close(LA.cholesky(T(a)), np.linalg.cholesky(a), 1e-12)
    b = rand((500, 4, 4)) + 3 * np.eye(4)
    for impl in LU:
        with forced(impl):
            close(LA.inv(T(b)), np.linalg.inv(b), 1e-12)


def test_empty_matrices():
    Q, R = (x.numpy() for x in LA.qr(T(np.zeros((3, 0))), mode="complete"))
    assert np.array_equal(Q, np.eye(3)) and R.shape == (3, 0)
    U, S, Vh = (x.numpy() for x in LA.svd(T(np.zeros((2, 0)))))
    assert np.array_equal(U, np.eye(2)) and S.shape == (0,) and Vh.shape == (0, 0)
    assert LA.inv(T(np.zeros((0, 0)))).numpy().shape == (0, 0)
    assert LA.cholesky(T(np.zeros((2, 0, 0)))).numpy().shape == (2, 0, 0)
    assert LA.eigvalsh(T(np.zeros((0, 0)))).numpy().shape == (0,)
    assert LA.solve(T(np.zeros((0, 3, 3))), T(np.zeros((0, 3, 1)))).numpy().shape == (0, 3, 1)
    assert LA.det(T(np.zeros((4, 0, 0)))).numpy().tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("impl", LU)
@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9, 40])
def test_pivoting_heavy(impl, n):
    """Gaussian matrices with no diagonal shift: pivots land everywhere (3-cycles and longer)."""
    a = np.random.default_rng(n).standard_normal((300, n, n))
    b = np.random.default_rng(n + 1).standard_normal((300, n, 2))
    with forced(impl):
        close(LA.inv(T(a)) .numpy() @ a, np.broadcast_to(np.eye(n), a.shape), 1e-8)
        close(LA.solve(T(a), T(b)), np.linalg.solve(a, b), 1e-8)
        close(LA.det(T(a)), np.linalg.det(a), 1e-8)
        P, L, U = (x.numpy() for x in LA.lu(T(a)))
        close(P @ L @ U, a, 1e-12)


LSTSQ = impls("lapack:gels", "ref:any")


@pytest.mark.parametrize("impl", LSTSQ)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [(30, 10), (10, 30), (12, 12)])
def test_lstsq(impl, dtype, driver, shape):
    m, n = shape
    a = rand((2, 1) + shape, dtype)
    b = rand((3, m, 2), dtype)  # batch dims broadcast to (2, 3)
    want_x = np.linalg.pinv(a.astype(np.complex128)) @ b
    with forced(impl):
        x, res, rank, sv = (t.numpy() for t in LA.lstsq(T(a), T(b), driver=driver))
    assert x.shape == (2, 3, n, 2)
    close(x, want_x, tol(dtype) * 100)
    if driver == "gels":
        assert rank.shape == (0,)
    else:
        assert rank.shape == (2, 3) and np.all(rank == min(m, n))
    if driver in ("gelsd", "gelss"):
        close(sv, np.linalg.svd(np.broadcast_to(a, (2, 3) + shape).astype(np.complex128), compute_uv=False),
              tol(dtype) * 10)
    else:
        assert sv.shape == (0,)
    if m > n and driver != "gelsy":
        r = np.abs(a.astype(np.complex128) @ want_x - b) ** 2
        close(res, r.sum(axis=-2), tol(dtype) * 100)
    else:
        assert res.shape == (0,)


@pytest.mark.parametrize("impl", LSTSQ)
def test_lstsq_rank_deficient_and_errors(impl):
    a = rand((20, 3)) @ rand((3, 6))  # rank 3
    b = rand((20, 2))
    with forced(impl):
        x, res, rank, sv = (t.numpy() for t in LA.lstsq(T(a), T(b), driver="gelsd"))
    assert int(rank) == 3 and res.shape == (0,)  # no residuals unless full rank
    close(x, np.linalg.pinv(a) @ b, 1e-8)
    with pytest.raises(RuntimeError, match="should match other.size"):
        LA.lstsq(T(np.ones((3, 2))), T(np.ones((4, 1))))
    with pytest.raises(ValueError, match="driver"):
        LA.lstsq(T(np.ones((3, 2))), T(np.ones((3, 1))), driver="gesv")
