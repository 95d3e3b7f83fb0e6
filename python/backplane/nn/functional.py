"""backplane.nn.functional: scaled_dot_product_attention with torch's signature and semantics.

Arguments may be ``backplane.Tensor`` or anything ``backplane.asarray`` takes
(NumPy arrays, DLPack producers); the result is a ``backplane.Tensor``.
Backplane's dispatch chooses the implementation (flash:cpu, efficient:cpu, then math:any);
``backplane.backends.explain("sdpa", q, k, v[, mask], dropout_p=..., is_causal=1, scale=..., enable_gqa=1)``
says which and why, and ``backplane.nn.attention.sdpa_kernel`` restricts it.
"""

from .. import _C
from .._tensor import Tensor, asarray

__all__ = ["scaled_dot_product_attention"]


def _tensor(x):
    return x if isinstance(x, Tensor) else asarray(x)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key.T * scale + mask) @ value, as torch.nn.functional.scaled_dot_product_attention.

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev). ``attn_mask``: bool (True = take
    part) or float (added to the scores), broadcastable to (..., L, S). ``is_causal``: query i sees keys
    j <= i (top-left aligned). ``scale`` defaults to 1/sqrt(E). ``enable_gqa``: query heads (size(-3)) may
    be a multiple of key/value heads. ``dropout_p`` draws from backplane's default generator.
    """
    for name, flag in (("is_causal", is_causal), ("enable_gqa", enable_gqa)):
        if not isinstance(flag, bool):
            raise TypeError(f"scaled_dot_product_attention: {name} expects a bool, but got {type(flag).__name__}")
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)):
        raise TypeError(f"scaled_dot_product_attention: dropout_p expects a float, but got {type(dropout_p).__name__}")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))):
        raise TypeError(f"scaled_dot_product_attention: scale expects a float or None, but got {type(scale).__name__}")
    q, k, v = _tensor(query), _tensor(key), _tensor(value)
    mask = None if attn_mask is None else _tensor(attn_mask)
    from . import attention
    if attention.WARN_FOR_UNFUSED_KERNELS:
        _warn_if_unfused(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa)
    return _C.scaled_dot_product_attention(q, k, v, mask, float(dropout_p), is_causal,
                                           None if scale is None else float(scale), enable_gqa)


def _warn_if_unfused(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa):
    """With nn.attention.WARN_FOR_UNFUSED_KERNELS: when the call will run a math (unfused) implementation,
    one UserWarning per reason each fused implementation refused it (the decision table's rows)."""
    import warnings
    from ..backends import explain
    options = {"dropout_p": float(dropout_p), "is_causal": float(is_causal), "enable_gqa": float(enable_gqa)}
    if scale is not None:
        options["scale"] = float(scale)
    table = explain("sdpa", q, k, v, mask, **options)
    if not table.chosen or not table.chosen.startswith("math:"):
        return
    for row in table:
        if row.implementation.startswith("math:") or row.status in ("not built", "not available"):
            continue
        for reason in row.reasons:
            warnings.warn(f"{row.implementation} not used because {reason}", UserWarning, stacklevel=3)
