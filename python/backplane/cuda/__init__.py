"""backplane.cuda: CUDA devices, as ``torch.cuda`` answers about them.

Every answer comes from the backplane_cuda library, loaded on the first
question; without the library, a driver or a GPU, ``is_available()`` is False
and ``device_count()`` is 0 (never an exception). ``unavailable_reason()``
says why.
"""

from .. import _C, _errors

__all__ = [
    "is_built", "is_available", "unavailable_reason", "device_count", "get_device_name",
    "get_device_capability",
]


def is_built():
    """Whether this Backplane was compiled with CUDA (says nothing about drivers or devices)."""
    return _C.cuda_is_built()


def is_available():
    """Whether a CUDA device can be used in this process."""
    return _C.cuda_is_available()


def unavailable_reason():
    """Why ``is_available()`` is False ("not built: ...", "not available: ..."); "" when it is True."""
    return _C.cuda_unavailable_reason()


def device_count():
    """Number of usable CUDA devices (0 when CUDA is not available)."""
    return _C.cuda_device_count()


def _device_index(device):
    """An int index from None (device 0), an int, or "cuda" / "cuda:N"."""
    if device is None:
        return 0
    if isinstance(device, bool):
        raise _errors.bad_type("device", device, "a device index (int), \"cuda:N\" or None")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        kind, _, index = device.partition(":")
        if kind == "cuda" and (index == "" or index.isdigit()):
            return int(index) if index else 0
        raise _errors.bad_value("device", device, "a CUDA device string \"cuda\" or \"cuda:N\"")
    raise _errors.bad_type("device", device, "a device index (int), \"cuda:N\" or None")


def get_device_name(device=None):
    """Name of a CUDA device (IndexError naming the valid range if there is no such device)."""
    return _C.cuda_get_device_name(_device_index(device))


def get_device_capability(device=None):
    """(major, minor) compute capability of a CUDA device."""
    return tuple(_C.cuda_get_device_capability(_device_index(device)))
