"""backplane.backends.mps: Apple's Metal Performance Shaders; not available on Linux (truthful answers)."""

__all__ = ["is_built", "is_available", "is_macos_or_newer", "is_macos13_or_newer", "get_name", "get_core_count"]


def is_built():
    return False


def is_available():
    return False


def is_macos_or_newer(major, minor):
    """Whether this is macOS major.minor or newer: never on Linux."""
    return False


def is_macos13_or_newer(minor=0):
    return is_macos_or_newer(13, minor)


def _no_mps(what):
    raise RuntimeError(f"backplane.backends.mps.{what}: MPS is not available (Backplane was built without MPS; "
                       "it exists only on Apple platforms)")


def get_name():
    _no_mps("get_name")


def get_core_count():
    _no_mps("get_core_count")
