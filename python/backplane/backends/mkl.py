"""backplane.backends.mkl: Intel MKL, which is not part of this build (truthful answers)."""

from .. import _C, _errors
from . import _props

__all__ = ["is_available", "VERBOSE_OFF", "VERBOSE_ON", "verbose"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    """Whether this build has MKL: never (Backplane uses OpenBLAS and oneDNN)."""
    return _C.mkl_is_available()


class verbose:
    """``with verbose(VERBOSE_ON)`` would turn on MKL's verbose lines; MKL is not built, so it raises.

    The level is checked on entry, as PyTorch checks it (``True`` is 1).
    """

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        level = _props.verbose_level("backplane.backends.mkl.verbose", self.enable, ("VERBOSE_OFF (0)", "VERBOSE_ON (1)"))
        if level != VERBOSE_OFF and not is_available():
            raise _errors.runtime("backplane.backends.mkl.verbose",
                                  "backplane.backends.mkl.verbose: MKL is not built into Backplane "
                                  "(mkl.is_available() is False), so its verbose mode cannot be enabled; "
                                  "for oneDNN's use backplane.backends.mkldnn.verbose")
        return self

    def __exit__(self, *exc):
        return False


_props.install_module_properties(__name__, "mkl")
