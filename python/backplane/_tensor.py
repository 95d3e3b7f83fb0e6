"""Tensors at the Python level: ``asarray``, ``from_dlpack`` and ``Tensor``.

``Tensor`` and ``from_dlpack`` are the native ones (``backplane._C``); this
module adds ``asarray``, which accepts what users have at hand: NumPy arrays
(including ``ml_dtypes.bfloat16`` ones), anything that speaks DLPack, and
nested lists or scalars (through NumPy, so Python floats become float64 and
ints int64, as in NumPy).
"""

import numpy as np

from . import _C

Tensor = _C.Tensor


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A Tensor sharing memory with ``ext_tensor`` (anything with ``__dlpack__``), as torch.from_dlpack.

    ``device`` ("cpu", "cuda:N") moves it there; ``copy=True`` always
    copies, ``copy=False`` refuses to when one would be needed (a move).
    """
    t = _C.from_dlpack(ext_tensor)
    if device is not None and str(device) != str(t.device):
        if copy is False:
            raise _C.BackplaneValueError(f"from_dlpack: copy=False, but moving {t.device} to {device} copies")
        return t.to(device=device)
    return t.clone() if copy else t

__all__ = ["Tensor", "asarray", "from_dlpack"]

# The NumPy names of Backplane's dtypes (what Tensor.dtype reports).
_SUPPORTED = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128",
              "int8", "int32", "int64", "bool")

try:
    import ml_dtypes

    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bf16 then simply cannot come from NumPy
    _BFLOAT16 = None


def _from_numpy(arr):
    if _BFLOAT16 is not None and arr.dtype == _BFLOAT16:
        # NumPy's DLPack has no bfloat16: hand over the bits as uint16.
        return _C._from_dlpack_bf16_bits(arr.view(np.uint16))
    if arr.dtype.name not in _SUPPORTED:
        raise _C.BackplaneValueError(
            f"asarray: expected a dtype among {', '.join(_SUPPORTED)}, got NumPy dtype {arr.dtype.name}")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return from_dlpack(arr)


def asarray(obj, dtype=None, device=None):
    """A Tensor viewing ``obj`` without copying when it can, then converted.

    ``obj``: a Tensor, a NumPy array, any object with ``__dlpack__``
    (PyTorch, CuPy, JAX, ...), or nested sequences / scalars. ``dtype``: a
    name ("float32", "bfloat16", "f16"...) or a NumPy dtype. ``device``:
    "cpu", "cuda", "cuda:N". Like ``numpy.asarray``, the result shares memory
    with ``obj`` when neither dtype nor device changes.
    """
    if isinstance(obj, Tensor):
        t = obj
    elif isinstance(obj, np.ndarray):
        t = _from_numpy(obj)
    elif hasattr(obj, "__dlpack__"):
        t = from_dlpack(obj)
    else:
        t = _from_numpy(np.asarray(obj))
    if dtype is not None or device is not None:
        t = t.to(dtype=dtype, device=device)
    return t
