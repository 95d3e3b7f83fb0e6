"""backplane.nn.attention: SDPBackend, SDPAParams, the sdpa_kernel scope and
the flash-attention implementation registry (PyTorch 2.15).

``can_use_flash_attention`` / ``can_use_efficient_attention`` are
``backplane.backends.cuda``'s, re-exported as PyTorch re-exports them.
"""

import contextlib
import enum
import numbers

from ... import _C, _errors
from ._registry import (activate_flash_attention_impl, current_flash_attention_impl, list_flash_attention_impls,
                        register_flash_attention_impl, restore_flash_attention_impl)
# Backplane's counterpart of registering a kernel with PyTorch's dispatcher,
# for register_fn to call (not in __all__, which mirrors PyTorch's).
from ._registry import install_flash_attention  # noqa: E402

__all__ = ["SDPBackend", "SDPAParams", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "register_flash_attention_impl",
           "activate_flash_attention_impl", "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

_REEXPORTED = ("can_use_flash_attention", "can_use_efficient_attention")


def __getattr__(name):
    # Resolved on use: backplane.backends.cuda imports this module, so an
    # import here would be circular. The objects are cuda's own.
    if name in _REEXPORTED:
        from ...backends import cuda
        return getattr(cuda, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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


def _as_bool(subject, value):
    """A bool from what PyTorch's SDPAParams converts: bools, numbers (and NumPy's), None as False."""
    if value is None:
        return False
    if isinstance(value, (bool, numbers.Number)) or type(value).__module__ == "numpy":
        try:
            return bool(value)
        except (TypeError, ValueError):
            pass
    raise _errors.bad_type(subject, value, "a bool (or an int, float or None, as PyTorch converts them)")


class SDPAParams:
    """The parameters the SDPA checks judge: query, key, value, attn_mask, dropout, is_causal, enable_gqa.

    All seven are required and positional, and read-only afterwards. As in
    PyTorch, ``is_causal`` and ``enable_gqa`` take ints (``1``) and None
    (False) too, and ``dropout`` any real number.
    """

    __slots__ = ("_values",)
    _FIELDS = ("query", "key", "value", "attn_mask", "dropout", "is_causal", "enable_gqa")

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa, /):
        is_causal = _as_bool("SDPAParams: is_causal", is_causal)
        enable_gqa = _as_bool("SDPAParams: enable_gqa", enable_gqa)
        if not isinstance(dropout, numbers.Real):
            raise _errors.bad_type("SDPAParams: dropout", dropout, "a float")
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
        raise _errors.bad_type("sdpa_kernel: backends", backends, "an SDPBackend or a list of SDPBackend values")
    out = []
    for b in backends:
        if not isinstance(b, SDPBackend) or b == SDPBackend.ERROR:
            allowed = "SDPBackend values (MATH, FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION or OVERRIDEABLE)"
            raise _errors.bad_type("sdpa_kernel: backends", b, allowed,
                                   message=f"sdpa_kernel: {b!r} is not an SDPBackend ({allowed})")
        if b not in out:  # duplicates dropped, order kept
            out.append(b)
    return out


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Only ``backends`` may run inside the block, on this thread.

    With ``set_priority=True`` they are also tried in the given order, ahead of the others.
    ``set_priority`` may be an int or None too (PyTorch reads it as a truth value).
    """
    chosen = _backend_list(backends)
    if set_priority is not None and not isinstance(set_priority, numbers.Integral):
        raise _errors.bad_type("sdpa_kernel: set_priority", set_priority, "a bool (or an int or None)")
    set_priority = bool(set_priority)
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
