"""backplane.backends.openmp."""

from .. import _C
from . import _props

__all__ = ["is_available"]


def is_available():
    """Whether this build uses OpenMP."""
    return _C.openmp_is_available()


_props.install_module_properties(__name__, "openmp")
