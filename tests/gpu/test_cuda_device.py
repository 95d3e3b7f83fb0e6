"""GPU tests: run by scripts/gpu-check on a machine with a CUDA device, and
skipped cleanly everywhere else. Where PyTorch is importable, its answers
are the oracle."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

import backplane  # noqa: E402
import backplane.backends as B  # noqa: E402
from backplane import _C  # noqa: E402

pytestmark = pytest.mark.skipif(not backplane.cuda.is_available(),
                                reason=f"no CUDA device: {backplane.cuda.unavailable_reason()}")

try:
    import torch
    HAVE_TORCH = torch.cuda.is_available()
except Exception:  # noqa: BLE001
    HAVE_TORCH = False
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch with CUDA is not importable")


def test_devices_are_seen():
    assert backplane.cuda.device_count() >= 1
    for i in range(backplane.cuda.device_count()):
        assert backplane.cuda.get_device_name(i)
        major, minor = backplane.cuda.get_device_capability(i)
        assert major >= 5
    with pytest.raises(IndexError):
        backplane.cuda.get_device_name(backplane.cuda.device_count())


def test_a_kernel_runs_end_to_end():
    ran, ok, message = _C.cuda_selftest()
    assert ran and ok, message


def test_every_cuda_library_reports_a_version():
    records = {b.name: b for b in B.list_backends()}
    for name in ("cuda", "cublas", "cublaslt", "cudnn", "cufft", "cusolver"):
        if _C.built_with.get(name):
            assert records[name].available, (name, records[name].reason)
            assert records[name].version, name


@needs_torch
def test_devices_match_pytorch():
    assert backplane.cuda.device_count() == torch.cuda.device_count()
    for i in range(torch.cuda.device_count()):
        assert backplane.cuda.get_device_name(i) == torch.cuda.get_device_name(i)
        assert tuple(backplane.cuda.get_device_capability(i)) == tuple(torch.cuda.get_device_capability(i))


def test_cufft_plan_cache_per_device():
    cache = B.cuda.cufft_plan_cache[0]
    assert cache.max_size == 4096 and cache.size == 0
    cache.max_size = 16
    assert B.cuda.cufft_plan_cache.max_size == 16  # the manager forwards to the current device
    with pytest.raises(RuntimeError, match="non-negative"):
        cache.max_size = -1
    with pytest.raises(RuntimeError, match="read-only"):
        cache.size = 3
    cache.clear()
    cache.max_size = 4096


def test_cublas_workspace_default_follows_the_device():
    expected = 32 * 1024 * 1024 if backplane.cuda.get_device_capability(0) == (9, 0) else 4096 * 1024 * 2 + 16 * 1024 * 8
    assert B.cuda.cublas_workspace_size() == expected
