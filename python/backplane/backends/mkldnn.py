"""backplane.backends.mkldnn: oneDNN use, precision (bf16 on the CPU) and oneDNN's own verbose output.

``enabled``, ``deterministic`` and ``fp32_precision`` are generated
properties; ``matmul`` / ``conv`` / ``rnn`` hold their ``fp32_precision``.
"""

import contextlib
import warnings

from .. import _C, _errors
from . import _props

__all__ = ["is_available", "is_acl_available", "VERBOSE_OFF", "VERBOSE_ON", "VERBOSE_ON_CREATION", "verbose",
           "flags", "set_flags", "enabled", "deterministic", "allow_tf32", "fp32_precision", "matmul", "conv", "rnn"]

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2


def is_available():
    """Whether this build has oneDNN."""
    return _C.mkldnn_is_available()


def is_acl_available():
    """oneDNN with the Arm Compute Library: never on x86."""
    return _C.mkldnn_is_acl_available()


class verbose:
    """Scoped oneDNN verbose output (process-wide: oneDNN's switch is global).

    ``with verbose(VERBOSE_ON): ...`` prints oneDNN's own lines for the
    primitives run inside. The level is checked on entry, as PyTorch checks
    it (``True`` is level 1). On exit the previous level comes back (PyTorch
    always turns it off; docs/differences.md).
    """

    def __init__(self, level):
        self.level = level
        self._previous = None

    def __enter__(self):
        level = _props.verbose_level("backplane.backends.mkldnn.verbose", self.level,
                               ("VERBOSE_OFF (0)", "VERBOSE_ON (1)", "VERBOSE_ON_CREATION (2)"))
        if level != VERBOSE_OFF and not is_available():
            raise _errors.runtime("backplane.backends.mkldnn.verbose", "backplane.backends.mkldnn.verbose: oneDNN "
                                  "is not built into Backplane, so its verbose mode cannot be enabled")
        self._previous = _C.flag_get("mkldnn.verbose_level")
        _C.flag_set("mkldnn.verbose_level", level)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            _C.flag_set("mkldnn.verbose_level", self._previous)
            self._previous = None
        return False


matmul = _props.property_object("mkldnn.matmul")
conv = _props.property_object("mkldnn.conv")
rnn = _props.property_object("mkldnn.rnn")


def _allow_tf32_assignments(allow):
    _props.check_bool("mkldnn.allow_tf32", allow)
    return [("mkldnn.allow_tf32", allow)]


_flags_spec = _props.FlagsSpec([
    _props.flag_param("enabled", "mkldnn.enabled", False),
    _props.flag_param("deterministic", "mkldnn.deterministic", False),
    # Read as the property reads it: None without an Intel GPU, as in PyTorch's snapshot.
    ("allow_tf32", True, lambda: None, _allow_tf32_assignments),
    _props.flag_param("fp32_precision", "mkldnn.fp32_precision", "none"),
])


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Sets the given flags process-wide (all validated before any is applied); returns the previous values."""
    return _flags_spec.set_flags(_enabled, _deterministic, _allow_tf32, _fp32_precision)


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Scoped oneDNN flags for this thread. Note PyTorch's defaults: ``flags()`` disables oneDNN."""
    with _flags_spec.scope((enabled, deterministic, allow_tf32, fp32_precision)):
        yield


def _allow_tf32_get(self):
    # TF32 on oneDNN exists only for Intel GPUs; PyTorch reads None elsewhere.
    return None


def _allow_tf32_set(self, value):
    _props.check_bool("mkldnn.allow_tf32", value)
    warnings.warn("TF32 acceleration on top of oneDNN is available for Intel GPUs. This Backplane build has no "
                  "Intel GPU support; the value is stored and has no effect.", stacklevel=2)
    _C.flag_set("mkldnn.allow_tf32", value)


_props.install_module_properties(__name__, "mkldnn", {
    "allow_tf32": property(_allow_tf32_get, _allow_tf32_set, doc="TF32 on oneDNN (Intel GPUs only)"),
})
