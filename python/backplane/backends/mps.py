"""backplane.backends.mps: Apple's Metal Performance Shaders; not available on Linux (truthful answers)."""

from .. import _C

__all__ = ["is_built", "is_available", "is_macos_or_newer", "is_macos13_or_newer", "get_name", "get_core_count"]


def is_built():
    return _C.mps_is_built()


def is_available():
    return _C.mps_is_available()


def is_macos_or_newer(major, minor):
    """Whether this is macOS major.minor or newer: never on Linux."""
    return _C.mps_is_macos_or_newer(major, minor)


def is_macos13_or_newer(minor=0):
    return is_macos_or_newer(13, minor)


def get_name():
    """The Metal device name (raises where MPS is not available)."""
    return _C.mps_get_name()


def get_core_count():
    """The GPU core count (raises where MPS is not available)."""
    return _C.mps_get_core_count()
