"""backplane.backends.cusparselt: NVIDIA's 2:4 structured-sparsity GEMM library."""

from .. import _C
from . import _props

__all__ = ["version", "is_available", "get_max_alg_id"]


def version():
    """cuSPARSELt's version as an int (602 = 0.6.2), or None when not built."""
    return _C.cusparselt_version()


def is_available():
    """Whether this build has cuSPARSELt (PyTorch's build-time meaning)."""
    return _C.cusparselt_is_available()


def get_max_alg_id():
    """The largest cuSPARSELt algorithm id, or None when not built."""
    return _C.cusparselt_get_max_alg_id()


_props.install_module_properties(__name__, "cusparselt")
