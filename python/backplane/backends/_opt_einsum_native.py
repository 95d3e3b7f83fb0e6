"""Backplane's native contraction-path optimiser, in the shape of the ``opt_einsum`` module.

``backplane.backends.opt_einsum.get_opt_einsum()`` returns this module, so
code written for PyTorch's ``torch.backends.opt_einsum.get_opt_einsum()``
(which returns the ``opt_einsum`` package) keeps working without that
package::

    oe = backplane.backends.opt_einsum.get_opt_einsum()
    path, info = oe.contract_path("ab,bc,cd->ad", a, b, c, optimize="dp")
    print(info)   # the report opt_einsum prints: scalings, FLOP counts, each contraction

The paths come from Backplane's own optimisers (C++; the strategies of
``backends.opt_einsum.strategy`` and opt_einsum's ``dp`` and ``branch-*``),
with opt_einsum's cost model, through the same bounded path cache that
``backplane.einsum`` uses (``cache_info()``, ``cache_clear()``).
"""

from .. import _C, _errors

__all__ = ["contract_path", "PathInfo", "paths", "cache_info", "cache_clear", "set_cache_max_size"]

__version__ = "backplane-native"

#: The strategies ``contract_path(optimize=...)`` takes (also True for "auto", and False).
paths = ("auto", "greedy", "optimal", "dp", "branch-1", "branch-2", "branch-all")


class PathInfo:
    """What ``contract_path`` reports, as opt_einsum's ``PathInfo``: print it for the table.

    The path, strategy and costs come with the search; the per-contraction
    report (``contraction_list``, ``scale_list``, ``size_list``, the printed
    table) is built on first use, from the found path: it costs more than a
    greedy search, and most callers only want the path.
    """

    _REPORT = ("contraction_list", "scale_list", "size_list", "_text")

    # Made by contract_path from the attributes _C.einsum_contract_path_info
    # returns (path, strategy, input_subscripts, output_subscript, eq, shapes,
    # naive_cost, opt_cost, speedup, largest_intermediate, and _request: what
    # the report is built from): one dict, no per-attribute Python code.
    @classmethod
    def _of(cls, attributes):
        info = cls.__new__(cls)
        info.__dict__ = attributes
        return info

    def __getattr__(self, name):  # only for attributes not yet set: the report's
        if name not in PathInfo._REPORT or "_request" not in self.__dict__:
            raise AttributeError(f"'PathInfo' object has no attribute '{name}'")
        subscripts, dims, memory_limit = self.__dict__.pop("_request")
        optimize = [tuple(step) for step in self.path]
        d = _C.einsum_contract_path(subscripts, dims, optimize, memory_limit, True)
        self.contraction_list = d["contraction_list"]
        self.scale_list = d["scale_list"]
        self.size_list = d["size_list"]
        self._text = d["text"]
        return getattr(self, name)

    def __repr__(self):
        return self._text

    __str__ = __repr__


def _label(v):
    if v is Ellipsis:
        return "..."
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 52:
        return chr(ord("A") + v) if v < 26 else chr(ord("a") + v - 26)
    raise _errors.bad_value("contract_path", v, "sublist entries in [0, 52) or Ellipsis (...)")


def _from_sublists(first, rest):
    """opt_einsum's interleaved form (op, sublist, op, sublist, ..., [output]) as (equation, operands)."""
    items = (first,) + tuple(rest)
    output = None
    if len(items) % 2:
        output, items = items[-1], items[:-1]
    operands, terms = list(items[0::2]), ["".join(_label(v) for v in s) for s in items[1::2]]
    eq = ",".join(terms)
    return (eq if output is None else eq + "->" + "".join(_label(v) for v in output)), operands


def _shape(x, shapes):
    if shapes or (isinstance(x, (tuple, list)) and all(isinstance(d, int) and not isinstance(d, bool) for d in x)):
        return [int(d) for d in x]
    shape = getattr(x, "shape", None)
    if shape is None:
        raise _errors.bad_type("contract_path operand", x, "an array, a tensor or (with shapes=True) a shape")
    return [int(d) for d in shape]


def contract_path(subscripts, *operands, optimize="auto", memory_limit=None, shapes=False, use_blas=True):
    """The contraction path of an einsum and its report, as ``opt_einsum.contract_path``.

    ``operands`` are arrays or tensors (anything with ``.shape``), or shapes
    (tuples of ints; ``shapes=True`` says so explicitly). ``optimize`` is a
    strategy of ``paths``, True ("auto"), False (one step over every
    operand) or an explicit path to report on. ``memory_limit``: None, an
    int (most elements an intermediate may have; -1 for none) or
    "max_input". ``use_blas`` is accepted for compatibility: the BLAS column
    says how ``backplane.einsum`` runs each step. Returns ``(path, PathInfo)``.
    """
    del use_blas
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists(subscripts, operands)
    d = _C.einsum_contract_path_info(subscripts, operands, optimize, memory_limit, shapes)
    if d is None:  # an operand the native reading does not take: read it here, with its errors
        d = _C.einsum_contract_path_info(subscripts, tuple(_shape(x, shapes) for x in operands), optimize,
                                         memory_limit, True)
    return d["path"], PathInfo._of(d)


def cache_info():
    """The path cache shared with ``backplane.einsum``: size, max_size, hits, misses."""
    return _C.einsum_path_cache_info()


def cache_clear():
    """Empties the path cache (and its hit/miss counts)."""
    _C.einsum_path_cache_clear()


def set_cache_max_size(max_size):
    """Bounds the path cache (least recently used paths go first; 0 caches nothing)."""
    _C.einsum_path_cache_set_max_size(max_size)
