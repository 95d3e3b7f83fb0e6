"""backplane.backends: the compute backends of this machine and their knobs.

Mirrors ``torch.backends`` name for name (Note [Python flag properties] in
_props.py). Package-level: ``fp32_precision``, ``trace``, ``flags(...)``,
``set_flags(...)``, ``disable_global_flags()``, ``flags_frozen()``, and Backplane's own
``list_backends()``.
"""

import contextlib

from .. import _C
from . import _props

__all__ = [
    "cpu", "cuda", "cudnn", "cusparselt", "kleidiai", "mha", "miopen", "mkl", "mkldnn", "mps",
    "nnpack", "openmp", "opt_einsum", "python_native", "xeon",
    "disable_global_flags", "flags_frozen", "flags_epoch", "flags", "set_flags", "list_backends",
]

_flags_spec = _props.FlagsSpec([_props.flag_param("fp32_precision", "fp32_precision", "none")])


def disable_global_flags():
    """Refuse later assignments to freezable flags outside a ``flags()`` scope (for test suites)."""
    _C.disable_global_flags()


def flags_frozen():
    return _C.flags_frozen()


def flags_epoch():
    """A counter that changes whenever a process-wide flag value changes (scoped changes do not move it)."""
    return _C.flags_epoch()


def set_flags(_fp32_precision="none"):
    """Sets the generic fp32 precision (unless None); returns the previous value as a 1-tuple."""
    return _flags_spec.set_flags(_fp32_precision)


@contextlib.contextmanager
def flags(fp32_precision="none"):
    """Scoped generic fp32 precision, for this thread."""
    with _flags_spec.scope((fp32_precision,)):
        yield


def list_backends():
    """Every backend Backplane knows: built, available, version, devices, features."""
    return _C.list_backends()


_props.install_module_properties(__name__, "")

from . import (  # noqa: E402  (submodules read the package's helpers)
    cpu, cuda, cudnn, cusparselt, kleidiai, mha, miopen, mkl, mkldnn, mps, nnpack, openmp, opt_einsum,
    python_native, xeon,
)
from ._dispatch import (  # noqa: E402
    NoImplementationError, autotune_cache, explain, implementations, list_implementations,
)

# Every backends module refuses to have its functions replaced (Note [Module attributes]).
for _name in ("cpu", "cuda", "cudnn", "cusparselt", "kleidiai", "mha", "miopen", "mkl", "mkldnn", "mps", "nnpack",
              "openmp", "opt_einsum", "python_native", "xeon"):
    _props.guard_module(f"{__name__}.{_name}")
del _name
