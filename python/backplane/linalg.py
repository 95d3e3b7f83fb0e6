"""``backplane.linalg``: the linalg op's entries (cholesky, solve, inv, lu, qr, eigh, svd, ...),
put here from their C++ declarations when ``backplane`` is imported, and ``LinAlgError``.

``LinAlgError`` is what PyTorch's ``torch.linalg.LinAlgError`` is: the error of a
numerical failure (a singular matrix for inv / solve / lu_factor, a matrix that is
not positive-definite for cholesky, an eigen- or singular-value iteration that did
not converge), a subclass of ``RuntimeError``, so ``except RuntimeError`` still
catches it (Note [Linalg errors] in src/ops/linalg/front.h).
"""

from . import _C

LinAlgError = _C.LinAlgError

__all__ = ["LinAlgError"]
