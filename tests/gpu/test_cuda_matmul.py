"""cublas:gemm and cublaslt:gemm on a real GPU (scripts/gpu-check), against
NumPy in float64 and, where importable, torch.matmul."""

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

import backplane  # noqa: E402
import backplane.backends as B  # noqa: E402

pytestmark = pytest.mark.skipif(not backplane.cuda.is_available(),
                                reason=f"no CUDA device: {backplane.cuda.unavailable_reason()}")

IMPLS = ["cublas:gemm", "cublaslt:gemm"]
TOL = {"float32": 1e-4, "float64": 1e-10, "float16": 2e-2, "bfloat16": 5e-2}


def on_gpu(x):
    return backplane.asarray(x, device="cuda")


def host(t):
    return np.asarray(t.to("cpu").to("float32" if t.dtype in ("float16", "bfloat16") else t.dtype).numpy())


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (17, 33, 65), (128, 64, 256), (255, 257, 129)])
def test_matches_numpy(impl, dtype, m, n, k):
    a, b = rand((m, k), 1), rand((k, n), 2)
    ta, tb = on_gpu(a).to(dtype), on_gpu(b).to(dtype)
    with B.implementations("matmul", impl):
        out = backplane.matmul(ta, tb)
    assert out.device.startswith("cuda") and out.dtype == dtype
    ref = host(ta).astype(np.float64) @ host(tb).astype(np.float64)
    np.testing.assert_allclose(host(out), ref, rtol=TOL[dtype], atol=TOL[dtype] * np.sqrt(k))


@pytest.mark.parametrize("impl", IMPLS)
def test_transposed_views_and_batches(impl):
    a, b = rand((3, 40, 24), 3), rand((24, 56), 4)
    ta = on_gpu(np.ascontiguousarray(a.transpose(0, 2, 1))).T  # a transposed view
    with B.implementations("matmul", impl):
        out = backplane.matmul(ta, on_gpu(b))
    np.testing.assert_allclose(host(out), a @ b, rtol=1e-4, atol=1e-4)


def test_tf32_is_a_permission_with_a_signature():
    a, b = rand((256, 1024), 5), rand((1024, 256), 6)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    ta, tb = on_gpu(a), on_gpu(b)
    backplane.set_float32_matmul_precision("highest")
    err_highest = np.abs(host(backplane.matmul(ta, tb)) - exact).max()
    backplane.set_float32_matmul_precision("high")
    try:
        err_high = np.abs(host(backplane.matmul(ta, tb)) - exact).max()
    finally:
        backplane.set_float32_matmul_precision("highest")
    assert err_highest < 1e-3
    if backplane.cuda.get_device_capability(0) >= (8, 0):
        assert err_high > 10 * err_highest  # TF32 really ran


def test_split_k_off_needs_cublaslt():
    a = on_gpu(rand((64, 64), 7)).to("float16")
    B.cuda.matmul.allow_fp16_reduced_precision_reduction = (False, False)
    try:
        rows = {r.implementation: r for r in B.explain("matmul", a, a)}
        assert rows["cublas:gemm"].status == "rejected"
        assert any("cuBLASLt" in reason for reason in rows["cublas:gemm"].reasons)
        assert B.explain("matmul", a, a).chosen == "cublaslt:gemm"
        backplane.matmul(a, a)
    finally:
        B.cuda.matmul.allow_fp16_reduced_precision_reduction = True


def test_preferred_blas_library_moves_cublaslt_first():
    a = on_gpu(rand((32, 32), 8))
    assert B.explain("matmul", a, a).chosen == "cublas:gemm"
    B.cuda.preferred_blas_library("cublaslt")
    try:
        assert B.explain("matmul", a, a).chosen == "cublaslt:gemm"
    finally:
        B.cuda.preferred_blas_library("default")


def test_addmm_and_linear_with_bias():
    a, w, bias = rand((8, 16), 9), rand((12, 16), 10), rand((12,), 11)
    out = backplane.linear(on_gpu(a), on_gpu(w), on_gpu(bias))
    np.testing.assert_allclose(host(out), a @ w.T + bias, rtol=1e-4, atol=1e-4)


def test_against_torch_when_importable():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    a, b = rand((300, 200), 12), rand((200, 100), 13)
    ours = host(backplane.matmul(on_gpu(a), on_gpu(b)))
    theirs = torch.matmul(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()).cpu().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)
