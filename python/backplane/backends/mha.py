"""backplane.backends.mha: the MultiheadAttention / TransformerEncoderLayer fast-path switch."""

from .. import _C
from . import _props

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]


def get_fastpath_enabled():
    """Whether the fast path may be used (it still needs every one of its conditions)."""
    return _C.flag_get("mha.fastpath_enabled")


def set_fastpath_enabled(value):
    """Allows or forbids the fast path. A real bool is required (PyTorch takes anything truthy)."""
    _props.check_bool("mha.set_fastpath_enabled", value)
    _C.flag_set("mha.fastpath_enabled", value)


_props.install_module_properties(__name__, "mha")
