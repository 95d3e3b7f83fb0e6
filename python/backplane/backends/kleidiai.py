"""backplane.backends.kleidiai: Arm KleidiAI micro-kernels, never built on x86."""

from .. import _C
from . import _props

__all__ = ["is_available"]


def is_available():
    return _C.kleidiai_is_available()


_props.install_module_properties(__name__, "kleidiai")
