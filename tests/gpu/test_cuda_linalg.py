"""linalg's CUDA rows on a real GPU (scripts/gpu-check): cusolver:potrf / getrf /
geqrf / syevd / gesvd and cublas:getrf_batched against NumPy, each forced, every
dtype; cuda.preferred_linalg_library choosing among them (explain), the _ex infos
and error texts on the device, torch.linalg beside it where importable. Skipped
without a device."""

import numpy as np
import pytest

from gpu_common import needs_torch, requires_cuda, torch  # first: it puts this checkout's package on sys.path

import backplane
import backplane.backends as B
import backplane.linalg as LA

pytestmark = requires_cuda

RNG = np.random.default_rng(5)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def rand(shape, dtype):
    x = RNG.uniform(-1, 1, shape)
    if np.iscomplexobj(np.zeros(1, dtype)):
        x = x + 1j * RNG.uniform(-1, 1, shape)
    return x.astype(dtype)


def hpd(shape, dtype):
    a = rand(shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def on_gpu(x):
    return backplane.asarray(x, device="cuda")


def host(t):
    assert t.device.startswith("cuda")
    return t.to("cpu").numpy()


def tol(dtype):
    return 1e-3 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9


def forced(name):
    return B.implementations("linalg", name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cusolver_cholesky_and_solve(dtype):
    a = hpd((3, 40, 40), dtype)
    b = rand((3, 40, 2), dtype)
    with forced("cusolver:potrf"):
        L = host(LA.cholesky(on_gpu(a)))
        x = host(backplane.cholesky_solve(on_gpu(b), on_gpu(L)))
    np.testing.assert_allclose(L, np.linalg.cholesky(a), atol=tol(dtype) * 40)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), atol=tol(dtype) * 40)


@pytest.mark.parametrize("impl", ["cusolver:getrf", "cublas:getrf_batched"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_inv_solve(impl, dtype):
    a = rand((4, 24, 24), dtype) + 4 * np.eye(24, dtype=dtype)
    b = rand((4, 24, 3), dtype)
    with forced(impl):
        np.testing.assert_allclose(host(LA.inv(on_gpu(a))), np.linalg.inv(a), atol=tol(dtype) * 40)
        np.testing.assert_allclose(host(LA.solve(on_gpu(a), on_gpu(b))), np.linalg.solve(a, b), atol=tol(dtype) * 40)
        P, L, U = (host(t) for t in LA.lu(on_gpu(a)))
    np.testing.assert_allclose(P @ L @ U, a, atol=tol(dtype) * 40)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_eigh_svd(dtype):
    a = rand((2, 30, 20), dtype)
    with forced("cusolver:geqrf"):
        Q, R = (host(t) for t in LA.qr(on_gpu(a)))
    np.testing.assert_allclose(Q @ R, a, atol=tol(dtype) * 40)
    h = hpd((2, 20, 20), dtype)
    with forced("cusolver:syevd"):
        w = host(LA.eigvalsh(on_gpu(h)))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), rtol=tol(dtype) * 40)
    with forced("cusolver:gesvd"):
        U, S, Vh = (host(t) for t in LA.svd(on_gpu(a), full_matrices=False))
    np.testing.assert_allclose((U * S[..., None, :]) @ Vh, a, atol=tol(dtype) * 40)


def test_errors_and_infos_on_the_device():
    a = np.stack([hpd((4, 4), np.float64) for _ in range(3)])
    a[1, 0, 0] = -1
    L, info = LA.cholesky_ex(on_gpu(a))
    assert host(info).tolist() == [0, 1, 0]
    with pytest.raises(RuntimeError, match=r"linalg.cholesky: \(Batch element 1\): The factorization"):
        LA.cholesky(on_gpu(a))


def test_preference_chooses_among_the_cuda_rows():
    small_batch = on_gpu(rand((8, 16, 16), np.float32) + 4 * np.eye(16, dtype=np.float32))
    d = B.explain("linalg.inv", small_batch)
    assert d.chosen == "cublas:getrf_batched"
    with _prefer("cusolver"):
        assert B.explain("linalg.inv", small_batch).chosen == "cusolver:getrf"
    one = on_gpu(rand((600, 600), np.float32) + 30 * np.eye(600, dtype=np.float32))
    assert B.explain("linalg.inv", one).chosen == "cusolver:getrf"


class _prefer:
    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.old = str(B.cuda.preferred_linalg_library()).split(".")[-1].lower()
        B.cuda.preferred_linalg_library(self.value)

    def __exit__(self, *exc):
        B.cuda.preferred_linalg_library(self.old)


@needs_torch
def test_against_torch():
    a = hpd((5, 64, 64), np.float64)
    got = host(LA.cholesky(on_gpu(a)))
    want = torch.linalg.cholesky(torch.from_numpy(a).cuda()).cpu().numpy()
    np.testing.assert_allclose(got, want, atol=1e-10)
