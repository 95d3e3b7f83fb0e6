"""backplane.backends.kleidiai: Arm KleidiAI micro-kernels, never built on x86."""

from .. import _C

__all__ = ["is_available"]


def is_available():
    return _C.kleidiai_is_available()
