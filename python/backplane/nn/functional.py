"""backplane.nn.functional: the functional ops, with torch's signatures and semantics.

The functions themselves are generated from the ops' C++ declarations
(``backplane._ops``): ``scaled_dot_product_attention`` today, the
convolutions as they land. Arguments may be ``backplane.Tensor`` or anything
``backplane.asarray`` takes; results are ``backplane.Tensor``.
``backplane.backends.explain("sdpa", q, k, v, is_causal=True)`` says which
implementation runs and why, and ``backplane.nn.attention.sdpa_kernel``
restricts it.
"""

import warnings

from .. import _ops

__all__ = []  # filled by backplane._ops.install()


def _warn_if_unfused(*args, **kwargs):
    """With nn.attention.WARN_FOR_UNFUSED_KERNELS: when the call will run a math (unfused) implementation,
    one UserWarning per reason each fused implementation refused it (the decision table's rows)."""
    from . import attention
    if not attention.WARN_FOR_UNFUSED_KERNELS:
        return
    from ..backends import explain
    table = explain("sdpa", *args, **kwargs)
    if not table.chosen or not table.chosen.startswith("math:"):
        return
    for row in table:
        if row.implementation.startswith("math:") or row.status in ("not built", "not available"):
            continue
        for reason in row.reasons:
            warnings.warn(f"{row.implementation} not used because {reason}", UserWarning, stacklevel=4)


_ops.before_call("sdpa", _warn_if_unfused)
