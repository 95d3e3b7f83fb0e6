"""backplane.sparse: 2:4 semi-structured sparse weights, as torch.sparse's.

``to_sparse_semi_structured(w)`` compresses a 2-D weight [out, in] whose
every group of 4 consecutive columns of a row holds at most 2 nonzeros (it
raises ValueError naming the first group that does not);
``to_sparse_semi_structured(w, prune=True)``, or ``prune_semi_structured(w)``
first, keeps the 2 entries of largest magnitude of each group. The result,
a ``SparseSemiStructuredTensor``, is the weight of
``backplane.nn.functional.linear(x, w, bias)``, the first operand of
``backplane.matmul(w, b)`` and ``w @ b``, and, transposed, the second of
``backplane.matmul(x, w.t())``; ``to_dense()`` gives the pruned dense weight
back. The products are the op "sparse" (entries ``semi_structured_linear``
and ``semi_structured_mm`` here), dispatched over cusparselt:spmma,
sparse24:cpu (AVX-512), sparse24:avx2, dense:matmul and ref:any; ``backends.explain("linear", x, w)``
shows the decision. The compressed layout is Note [2:4 CPU layout]
(src/kernels/cpu/sparse24.h): ``packed`` holds the stored values, ``meta``
a 4-bit code per group.
"""

from . import _C
from ._tensor import asarray

__all__ = ["SparseSemiStructuredTensor", "to_sparse_semi_structured", "prune_semi_structured"]


def _tensor(x):
    return x if isinstance(x, _C.Tensor) else asarray(x)


def prune_semi_structured(w):
    """A dense copy of ``w`` [out, in] keeping the 2 largest magnitudes of every group of 4 columns of a row.

    NaN counts as the largest; ties keep the lower column; a last partial group keeps at most 2.
    """
    return _C.sparse_prune(_tensor(w))


def to_sparse_semi_structured(original_tensor, *, prune=False):
    """``original_tensor`` [out, in] (float32, bfloat16, float16 or float64) as a SparseSemiStructuredTensor.

    Without ``prune`` the tensor must be 2:4 already: at most 2 nonzeros (NaN counts) in every group of 4
    consecutive columns of a row, else ValueError naming the first offending row and columns (PyTorch does
    not check; docs/differences.md). With ``prune=True`` the 2 largest magnitudes of each group are kept.
    """
    w = _tensor(original_tensor)
    packed, meta = _C.sparse_compress(w, bool(prune))
    return SparseSemiStructuredTensor(packed, meta, tuple(w.shape))


class SparseSemiStructuredTensor:
    """A 2:4 weight in compressed form: ``packed`` (values), ``meta`` (codes), ``shape`` of the dense weight."""

    __slots__ = ("packed", "meta", "_shape", "_transposed")

    def __init__(self, packed, meta, shape, transposed=False):
        self.packed = packed
        self.meta = meta
        self._shape = tuple(shape)  # of the untransposed weight
        self._transposed = transposed

    @property
    def shape(self):
        return self._shape[::-1] if self._transposed else self._shape

    @property
    def dtype(self):
        return self.packed.dtype

    @property
    def device(self):
        return self.packed.device

    @property
    def ndim(self):
        return 2

    def t(self):
        """The transposed view (for ``matmul(x, w.t())``); nothing is copied."""
        return SparseSemiStructuredTensor(self.packed, self.meta, self._shape, not self._transposed)

    @property
    def T(self):
        return self.t()

    def to_dense(self):
        """The dense weight (the pruned one), transposed if this view is."""
        dense = _C.sparse_to_dense(self.packed, self.meta, self._shape[0], self._shape[1])
        return dense.T if self._transposed else dense

    def __matmul__(self, other):
        from . import matmul

        return matmul(self, other)

    def __rmatmul__(self, other):
        from . import matmul

        return matmul(other, self)

    def __repr__(self):
        t = ", transposed" if self._transposed else ""
        return f"SparseSemiStructuredTensor(shape={list(self.shape)}, dtype={self.dtype}{t})"

    @classmethod
    def __backplane_entry__(cls, entry, args, kwargs):
        """Routes matmul / linear with a 2:4 weight to the sparse op (backplane._ops.redirect)."""
        if entry == "matmul":
            a, b = _bind(entry, ("a", "b"), args, kwargs)
            if isinstance(a, cls) and not a._transposed and not isinstance(b, cls):
                b = _tensor(b)
                _check_in(entry, a, b.shape[0] if b.ndim == 2 else None, "b's first dimension")
                return "sparse_mm", (a.packed, a.meta, b), {}
            if isinstance(b, cls) and b._transposed and not isinstance(a, cls):
                a = _tensor(a)
                _check_in(entry, b, a.shape[-1] if a.ndim else None, "a's last dimension")
                return "sparse_linear", (a, b.packed, b.meta), {}
            raise _C.BackplaneValueError(
                f"matmul: expected a SparseSemiStructuredTensor as the first operand (w @ b) or, transposed, as "
                f"the second (x @ w.t()), got operands {_kind(a)} and {_kind(b)}")
        if entry == "linear":
            x, w, bias = _bind(entry, ("input", "weight", "bias"), args, kwargs, optional=("bias",))
            if isinstance(w, cls) and not w._transposed and not isinstance(x, cls) and not isinstance(bias, cls):
                x = _tensor(x)
                _check_in(entry, w, x.shape[-1] if x.ndim else None, "input's last dimension")
                bias_args = () if bias is None else (_tensor(bias),)
                return "sparse_linear", (x, w.packed, w.meta, *bias_args), {}
            raise _C.BackplaneValueError(
                f"linear: expected a SparseSemiStructuredTensor (untransposed) as the weight only, got input "
                f"{_kind(x)}, weight {_kind(w)}")
        raise _C.BackplaneValueError(
            f"{entry}: expected no SparseSemiStructuredTensor argument (matmul and linear take one as their "
            f"weight), got one")


def _kind(x):
    if isinstance(x, SparseSemiStructuredTensor):
        return repr(x)
    return f"{type(x).__name__}{list(getattr(x, 'shape', ()))}"


def _bind(entry, names, args, kwargs, optional=()):
    unknown = set(kwargs) - set(names)
    if len(args) > len(names) or unknown:
        raise TypeError(f"{entry}() got unexpected arguments: {sorted(unknown) or len(args)}")
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in values:
            raise TypeError(f"{entry}() got multiple values for argument '{k}'")
        values[k] = v
    missing = [n for n in names if n not in values and n not in optional]
    if missing:
        raise TypeError(f"{entry}() missing required argument: '{missing[0]}'")
    return tuple(values.get(n) for n in names)


def _check_in(entry, w, got, what):
    cols = w._shape[1]
    if got != cols:
        raise _C.BackplaneValueError(
            f"{entry}: expected {what} equal to the 2:4 weight's in_features {cols}, got {got}")
