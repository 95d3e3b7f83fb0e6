"""backplane.backends.mps: Apple's Metal Performance Shaders; not available on Linux (truthful answers).

As in PyTorch on a build without MPS, the macOS-version questions raise a
RuntimeError and ``get_name()`` / ``get_core_count()`` raise an error that is
an AttributeError (what PyTorch raises) and a NotImplementedError.
"""

from .. import _C, _errors
from . import _props

__all__ = ["is_built", "is_available", "is_macos_or_newer", "is_macos13_or_newer", "get_name", "get_core_count"]


def is_built():
    return _C.mps_is_built()


def is_available():
    return _C.mps_is_available()


def _require_mps(subject):
    if not is_built():
        raise _errors.not_implemented(subject, f"Cannot execute {subject}() without the MPS backend: this "
                                      "Backplane build has no MPS (Apple GPUs only)")


def is_macos_or_newer(major: int, minor: int) -> bool:
    """Whether this is macOS major.minor or newer (raises RuntimeError without MPS, as PyTorch does)."""
    _require_mps("backplane.backends.mps.is_macos_or_newer")
    return _C.mps_is_macos_or_newer(major, minor)


def is_macos13_or_newer(minor: int = 0) -> bool:
    return is_macos_or_newer(13, minor)


def _unsupported(subject):
    return _errors.unsupported_attribute(subject, f"{subject}() is not available: this Backplane build has no "
                                         "MPS (Apple GPUs only)")


def get_name() -> str:
    """The Metal device name (raises where MPS is not built)."""
    if not is_built():
        raise _unsupported("backplane.backends.mps.get_name")
    return _C.mps_get_name()


def get_core_count() -> int:
    """The GPU core count (raises where MPS is not built)."""
    if not is_built():
        raise _unsupported("backplane.backends.mps.get_core_count")
    return _C.mps_get_core_count()


_props.install_module_properties(__name__, "mps")
