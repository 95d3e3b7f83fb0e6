"""backplane.backends.mha: the MultiheadAttention / TransformerEncoderLayer fast-path switch."""

from .. import _C
from . import _props

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled", "why_not_fast_path"]


def get_fastpath_enabled():
    """Whether the fast path may be used (it still needs every one of its conditions)."""
    return _C.flag_get("mha.fastpath_enabled")


def set_fastpath_enabled(value):
    """Allows or forbids the fast path. A real bool is required (PyTorch takes anything truthy)."""
    _props.check_bool("mha.set_fastpath_enabled", value)
    _C.flag_set("mha.fastpath_enabled", value)


def why_not_fast_path(module, *args, **kwargs):
    """Every fast-path condition that ``module(*args, **kwargs)`` fails, in PyTorch's words and order
    (a Backplane addition; [] when the fast path runs). PyTorch reports only the first, and only in
    some error texts; ``backends.explain("mha", module, *args)`` shows the whole decision.

    ``module``: a backplane.nn.MultiheadAttention or TransformerEncoderLayer; for a TransformerEncoder,
    the reason it does not skip the padding (spec §7.3) comes first, then its first layer's.
    """
    from ._dispatch import explain
    reasons = []
    if hasattr(module, "why_not_sparsity_fast_path"):
        why = module.why_not_sparsity_fast_path(*args, **kwargs)
        if why:
            reasons.append(why)
        src, mask, kpm = (list(args) + [None, None])[:3]
        mask, kpm = kwargs.get("mask", mask), kwargs.get("src_key_padding_mask", kpm)
        if not len(module.layers):
            return reasons
        module, args, kwargs = module.layers[0], (src,), {"src_mask": mask, "src_key_padding_mask": kpm}
    if not callable(getattr(module, "_op_call", None)):
        raise TypeError(f"why_not_fast_path expects a backplane.nn MultiheadAttention, TransformerEncoderLayer or "
                        f"TransformerEncoder, but got {type(module).__name__}")
    row = explain("mha", module, *args, **kwargs).row("fastpath:cpu")
    return reasons + [r.split(": ", 1)[1] if ": " in r else r for r in row.reasons]


_props.install_module_properties(__name__, "mha")
