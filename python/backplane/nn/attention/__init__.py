"""backplane.nn.attention: SDPBackend, SDPAParams and the sdpa_kernel scope."""

import contextlib
import enum

from ... import _C

__all__ = ["SDPBackend", "SDPAParams", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# When True, scaled_dot_product_attention warns, reason by reason, why each
# fused implementation refused a call that then runs a math (unfused) one.
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The scaled-dot-product-attention implementations, numbered as PyTorch numbers them."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# The flag row of each backend's enable switch.
_ENABLE_FLAG = {
    SDPBackend.MATH: "cuda.math_sdp_enabled",
    SDPBackend.FLASH_ATTENTION: "cuda.flash_sdp_enabled",
    SDPBackend.EFFICIENT_ATTENTION: "cuda.mem_efficient_sdp_enabled",
    SDPBackend.CUDNN_ATTENTION: "cuda.cudnn_sdp_enabled",
    SDPBackend.OVERRIDEABLE: "cuda.overrideable_sdp_enabled",
}


class SDPAParams:
    """The parameters the SDPA checks judge: query, key, value, attn_mask, dropout, is_causal, enable_gqa.

    All seven are required and positional, and read-only afterwards.
    """

    __slots__ = ("_values",)
    _FIELDS = ("query", "key", "value", "attn_mask", "dropout", "is_causal", "enable_gqa")

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa):
        if not isinstance(is_causal, bool) or not isinstance(enable_gqa, bool):
            raise TypeError("SDPAParams: is_causal and enable_gqa must be bools")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
            raise TypeError(f"SDPAParams: dropout must be a float, got {type(dropout).__name__}")
        object.__setattr__(self, "_values", (query, key, value, attn_mask, float(dropout), is_causal, enable_gqa))

    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "_values")[SDPAParams._FIELDS.index(name)]
        except ValueError:
            raise AttributeError(f"'SDPAParams' object has no attribute '{name}'") from None

    def __setattr__(self, name, value):
        raise AttributeError(f"SDPAParams.{name} is read-only")

    def __repr__(self):
        parts = ", ".join(f"{f}={getattr(self, f)!r}" for f in ("attn_mask", "dropout", "is_causal", "enable_gqa"))
        return f"SDPAParams({parts})"


def _backend_list(backends):
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple)):
        raise TypeError("sdpa_kernel: backends must be an SDPBackend or a list of SDPBackend values, "
                        f"got {type(backends).__name__}")
    out = []
    for b in backends:
        if not isinstance(b, SDPBackend) or b == SDPBackend.ERROR:
            raise TypeError(f"sdpa_kernel: {b!r} is not an SDPBackend (MATH, FLASH_ATTENTION, "
                            "EFFICIENT_ATTENTION, CUDNN_ATTENTION or OVERRIDEABLE)")
        if b not in out:  # duplicates dropped, order kept
            out.append(b)
    return out


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Only ``backends`` may run inside the block, on this thread.

    With ``set_priority=True`` they are also tried in the given order, ahead of the others.
    """
    chosen = _backend_list(backends)
    if not isinstance(set_priority, bool):
        raise TypeError(f"sdpa_kernel: set_priority must be a bool, got {type(set_priority).__name__}")
    assignments = [(path, b in chosen) for b, path in _ENABLE_FLAG.items()]
    if set_priority:
        previous = _C.flag_get("cuda.sdp_priority_order")
        order = [int(b) for b in chosen] + [b for b in previous if b not in chosen]
        assignments.append(("cuda.sdp_priority_order", order))
    with _C.FlagScope(assignments):
        yield {}


def _sdpa_kernel_variadic(*backends):
    """sdpa_kernel(list(backends)): PyTorch's spelling for torch.compile."""
    return sdpa_kernel(list(backends))
