"""backplane.backends.cudnn: cuDNN use, math mode and algorithm choice.

``enabled``, ``benchmark``, ``deterministic``, ``benchmark_limit``,
``fp32_precision`` and ``depthwise_kernel`` are generated properties;
``allow_tf32`` is a view of the fp32 precision tree (cuda.conv and cuda.rnn);
``conv`` holds its ``fp32_precision``; ``rnn`` is a submodule (as in PyTorch)
holding its ``fp32_precision`` and the RNN helpers.
"""

import contextlib

from ... import _C
from .. import _props

__all__ = ["version", "is_available", "is_acceptable", "flags", "set_flags", "enabled", "benchmark",
           "deterministic", "benchmark_limit", "allow_tf32", "fp32_precision", "depthwise_kernel", "conv", "rnn",
           "CUDNN_TENSOR_DTYPES"]

# The dtypes cuDNN takes (Tensor.dtype names).
CUDNN_TENSOR_DTYPES = {"float16", "float32", "float64"}


def version():
    """cuDNN's version as an int (91900 = 9.19.0), or None without cuDNN."""
    return _C.cudnn_version()


def is_available():
    """Whether this build has cuDNN (PyTorch's build-time meaning; see list_backends() for the runtime)."""
    return _C.cudnn_is_available()


def is_acceptable(tensor):
    """Whether cuDNN can take ``tensor`` (spec 5.2): cuDNN enabled, a CUDA tensor of fp16/fp32/fp64, a build with
    cuDNN (else a warning) and the library loadable (else a warning)."""
    import warnings

    if not _C.flag_get("cudnn.enabled"):
        return False
    if not str(getattr(tensor, "device", "cpu")).startswith("cuda"):
        return False
    if str(getattr(tensor, "dtype", "")) not in CUDNN_TENSOR_DTYPES:
        return False
    if not is_available():
        warnings.warn("Backplane was compiled without cuDNN/MIOpen support. To use cuDNN/MIOpen, rebuild Backplane "
                      "making sure the library is visible to the build system.", stacklevel=2)
        return False
    if version() is None:  # runs the compatibility check (spec 5.1) on first use
        warnings.warn("cuDNN/MIOpen library not found. Check your LD_LIBRARY_PATH", stacklevel=2)
        return False
    return True


conv = _props.property_object("cudnn.conv")


def _tf32_assignments(allow):
    _props.check_bool("cudnn.allow_tf32", allow)
    value = "tf32" if allow else "none"
    return [("cudnn.conv.fp32_precision", value), ("cudnn.rnn.fp32_precision", value)]


_flags_spec = _props.FlagsSpec([
    _props.flag_param("enabled", "cudnn.enabled", False),
    _props.flag_param("benchmark", "cudnn.benchmark", False),
    _props.flag_param("benchmark_limit", "cudnn.benchmark_limit", 10),
    _props.flag_param("deterministic", "cudnn.deterministic", False),
    ("allow_tf32", True, _C.cudnn_allow_tf32, _tf32_assignments),
    _props.flag_param("fp32_precision", "cudnn.fp32_precision", "none"),
    _props.flag_param("depthwise_kernel", "cudnn.depthwise_kernel", "auto"),
])


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None,
              _fp32_precision="none", _depthwise_kernel=None):
    """Sets the given flags process-wide (all validated before any is applied); returns the previous values
    as a 7-tuple (enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision,
    depthwise_kernel)."""
    return _flags_spec.set_flags(_enabled, _benchmark, _benchmark_limit, _deterministic, _allow_tf32,
                                 _fp32_precision, _depthwise_kernel)


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """Scoped cuDNN flags for this thread. Note PyTorch's defaults: ``flags()`` disables cuDNN."""
    with _flags_spec.scope((enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision,
                            depthwise_kernel)):
        yield


def _benchmark_limit_get(self):
    # PyTorch: the attribute is None when cuDNN is not available.
    return _C.flag_get("cudnn.benchmark_limit") if is_available() else None


_props.install_module_properties(__name__, "cudnn", {
    "allow_tf32": property(lambda self: _C.cudnn_allow_tf32(), lambda self, v: _C.set_cudnn_allow_tf32(v),
                           doc="fp32 cuDNN conv and RNN may use TF32 (a view of the precision tree)"),
    "benchmark_limit": property(_benchmark_limit_get,
                                lambda self, v: _C.flag_set("cudnn.benchmark_limit", v),
                                doc="Most cuDNN plans timed when benchmarking (0 = all)"),
})

from . import rnn  # noqa: E402  (the submodule, as torch.backends.cudnn.rnn)
