"""Dispatch from Python: ``list_implementations``, ``explain``, ``implementations`` and ``autotune_cache``.

Re-exported by ``backplane.backends`` (Note [One selection function] in
include/backplane/dispatch.h says how the choice is made).
"""

import collections

from .. import _C
from . import python_native

__all__ = ["list_implementations", "explain", "implementations", "autotune_cache", "Explanation", "ExplainRow",
           "NoImplementationError"]

NoImplementationError = _C.NoImplementationError

ExplainRow = collections.namedtuple("ExplainRow", ["implementation", "status", "reasons"])
ExplainRow.__doc__ = "One implementation's fate: status is chosen, acceptable, rejected, excluded, not built, ..."


class Explanation(list):
    """The decision table: a list of ExplainRow, plus ``op``, ``problem``, ``chosen``, ``how`` and ``notes``.

    ``str()`` is the table as text.
    """

    def __init__(self, decision, override=None):
        super().__init__(ExplainRow(name, status, list(reasons)) for name, status, reasons in decision["rows"])
        self.op = decision["op"]
        self.problem = decision["problem"]
        self.chosen = decision["chosen"]
        self.how = decision["how"]
        self.notes = list(decision["notes"])
        self._text = decision["text"]
        self.override = override
        if override is not None:
            name = getattr(override, "__qualname__", repr(override))
            self.notes.insert(0, f"python_native override {name} accepts this call and runs instead of the table")
            self._text += f"  note: {self.notes[0]}\n"

    def row(self, implementation):
        """The row of one implementation (KeyError if it is not listed)."""
        for r in self:
            if r.implementation == implementation:
                return r
        raise KeyError(implementation)

    def __str__(self):
        return self._text


def list_implementations(op):
    """The implementations of ``op`` in order: records with .name, .library, .built, .available (str() = name)."""
    return _C.list_implementations(op)


def explain(op, *args, **kwargs):
    """The whole decision for ``op(*args, **kwargs)`` without running it.

    ``op`` names an op entry point ("matmul", "addmm", "linear", "sdpa", ...;
    its Python name works too, "scaled_dot_product_attention"), and the
    arguments are the entry's own, with their real types:
    ``explain("sdpa", q, k, v, is_causal=True, scale=0.125)``. Tensors may be
    anything ``asarray`` takes. Unknown names and wrong types are a TypeError
    that shows the entry's signature. Returns an ``Explanation``: rows
    (implementation, status, reasons), notes, and ``chosen``. A matching
    ``python_native`` override is reported first.
    """
    if not isinstance(op, str):
        raise TypeError(f"explain expects the op name as a str, but got {type(op).__name__}")
    if args and callable(getattr(args[0], "_op_call", None)):
        # A module (backplane.nn.MultiheadAttention, ...) first: the op call its forward would make.
        op, args, kwargs = _module_call(op, args[0], args[1:], kwargs)
    entry = next((e["name"] for e in _C.op_entries() if op in (e["name"], e["python"].rsplit(".", 1)[1])), op)
    native = python_native.lookup(entry, *args, **kwargs)
    # The call the op would make (a SparseSemiStructuredTensor weight turns linear into sparse_linear).
    from .. import _ops  # imported here: _ops imports this package

    target, args, kwargs = _ops.redirect(entry, args, kwargs)
    decision = _C.op_explain(target if target != entry else op, args, kwargs)
    return Explanation(decision, native)


def _module_call(op, module, args, kwargs):
    entry, args, kwargs = module._op_call(*args, **kwargs)
    ops = {e["name"]: e["op"] for e in _C.op_entries()}
    if op not in (entry, ops[entry]):
        raise TypeError(f"explain({op!r}, {type(module).__name__}, ...): this module runs op {ops[entry]!r} "
                        f"(entry {entry!r}), not {op!r}")
    return entry, args, kwargs


def implementations(op, *names):
    """A thread-local scope restricting ``op`` to the named implementations.

    Names are full ("builtin:avx512") or library prefixes ("builtin"). Enable
    flags and checks still apply; an unknown name raises ValueError on entry.
    """
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"implementations({op!r}, ...) expects str names, but got {type(n).__name__}")
    return _C._ImplementationsScope(op, list(names))


class _AutotuneCache:
    """The process-wide cache of autotuned winners (CPU and, later, cuDNN ops).

    ``size``; ``max_size`` (least recently used go first; 0 caches nothing;
    env BACKPLANE_AUTOTUNE_CACHE_MAX_SIZE); ``clear()``; ``save(path)``;
    ``load(path)`` (returns how many entries were taken). The env var
    BACKPLANE_AUTOTUNE_CACHE names a file loaded at start-up and saved at exit.
    """

    @property
    def size(self):
        return _C.autotune_cache_size()

    @property
    def max_size(self):
        return _C.autotune_cache_max_size()

    @max_size.setter
    def max_size(self, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"autotune_cache.max_size expects an int >= 0, but got {type(value).__name__}")
        _C.autotune_cache_set_max_size(value)

    def clear(self):
        _C.autotune_cache_clear()

    def save(self, path):
        _C.autotune_cache_save(str(path))

    def load(self, path):
        return _C.autotune_cache_load(str(path))

    def __len__(self):
        return self.size

    def __repr__(self):
        return f"<backplane.backends.autotune_cache size={self.size} max_size={self.max_size}>"


autotune_cache = _AutotuneCache()
