"""What the GPU tests share: the package from this checkout on sys.path, the
mark that skips a module without a CUDA device, and PyTorch with CUDA as an
optional oracle (``needs_torch``; ``torch`` is None without it)."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

import backplane  # noqa: E402

requires_cuda = pytest.mark.skipif(not backplane.cuda.is_available(),
                                   reason=f"no CUDA device: {backplane.cuda.unavailable_reason()}")

try:
    import torch
    if not torch.cuda.is_available():
        torch = None
except Exception:  # noqa: BLE001
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch with CUDA is not importable")
