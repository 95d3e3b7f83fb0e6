"""backplane.backends.mkl: Intel MKL, which is not part of this build (truthful answers)."""

from .. import _C

__all__ = ["is_available", "VERBOSE_OFF", "VERBOSE_ON", "verbose"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    """Whether this build has MKL: never (Backplane uses OpenBLAS and oneDNN)."""
    return _C.mkl_is_available()


class verbose:
    """``with verbose(VERBOSE_ON)`` would turn on MKL's verbose lines; MKL is not built, so it raises."""

    def __init__(self, enable):
        if isinstance(enable, bool) or enable not in (VERBOSE_OFF, VERBOSE_ON):
            raise ValueError(f"backplane.backends.mkl.verbose: expected VERBOSE_OFF (0) or VERBOSE_ON (1), "
                             f"got {enable!r}")
        self.enable = enable

    def __enter__(self):
        if self.enable != VERBOSE_OFF and not is_available():
            raise RuntimeError("backplane.backends.mkl.verbose: MKL is not built into Backplane "
                               "(mkl.is_available() is False), so its verbose mode cannot be enabled; "
                               "for oneDNN's use backplane.backends.mkldnn.verbose")
        return self

    def __exit__(self, *exc):
        return False
