"""backplane.backends.openmp."""

from .. import _C

__all__ = ["is_available"]


def is_available():
    """Whether this build uses OpenMP."""
    return _C.openmp_is_available()
