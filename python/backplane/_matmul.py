"""``backplane.matmul``, ``addmm`` and ``linear``: torch.matmul semantics over every CPU GEMM.

Arguments may be ``backplane.Tensor`` or anything ``backplane.asarray``
accepts (NumPy arrays, DLPack producers, nested lists); the result is a
``backplane.Tensor``. A ``python_native`` override registered for the op runs
first when its predicate accepts the call; otherwise Backplane's dispatch
chooses (``backplane.backends.explain("matmul", a, b)`` says which and why).
"""

from . import _C
from ._tensor import Tensor, asarray
from .backends import python_native

__all__ = ["matmul", "addmm", "linear"]


def _tensor(x):
    return x if isinstance(x, Tensor) else asarray(x)


def matmul(a, b):
    """a @ b with torch.matmul semantics (1-D and N-D, batch broadcasting)."""
    override = python_native.lookup("matmul", a, b)
    if override is not None:
        return override(a, b)
    return _C.matmul(_tensor(a), _tensor(b))


def addmm(bias, a, b, *, beta=1.0, alpha=1.0):
    """beta * bias + alpha * (a @ b); a and b 2-D, bias broadcastable to the product."""
    override = python_native.lookup("addmm", bias, a, b, beta=beta, alpha=alpha)
    if override is not None:
        return override(bias, a, b, beta=beta, alpha=alpha)
    return _C.addmm(_tensor(bias), _tensor(a), _tensor(b), float(beta), float(alpha))


def linear(x, weight, bias=None):
    """x @ weight.T (+ bias): weight is [out_features, in_features]."""
    override = python_native.lookup("linear", x, weight, bias)
    if override is not None:
        return override(x, weight, bias)
    return _C.linear(_tensor(x), _tensor(weight), None if bias is None else _tensor(bias))
