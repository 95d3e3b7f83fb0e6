"""The op entry points, generated from their C++ declarations.

Each op declares its entry points once, in C++ (``src/ops/<op>/op.cpp``,
``backplane/op_spec.h``): name, Python name, arguments with their types and
defaults. ``install()`` (run by ``import backplane``) turns each into a
Python function with that signature in the module its Python name gives
(``backplane.matmul``, ``backplane.nn.functional.scaled_dot_product_attention``),
creating the module if the package has none. A call asks
``backends.python_native`` for an override first, then lets an argument
whose type defines ``__backplane_entry__`` redirect the call (``redirect``),
then runs the hooks other modules registered with ``before_call``, then the
native op.
"""

import importlib
import inspect
import sys
import types

from . import _C, return_types
from .backends import python_native

__all__ = ["install", "before_call", "entries", "redirect"]

_hooks = {}


def before_call(entry, hook):
    """Runs ``hook(*args, **kwargs)`` before every call of op entry ``entry`` (a name, as in ``entries()``)."""
    _hooks.setdefault(entry, []).append(hook)


def entries():
    """The declared entry points: dicts with name, python, signature, args (name, type, default, ...)."""
    return _C.op_entries()


def redirect(entry, args, kwargs):
    """The call ``entry(*args, **kwargs)`` as the (entry, args, kwargs) it stands for.

    An argument whose type defines ``__backplane_entry__(entry, args, kwargs)``
    rewrites the call, as ``__torch_function__`` lets a type take over a torch
    function: ``backplane.sparse.SparseSemiStructuredTensor`` sends
    ``linear(x, w)`` to ``sparse_linear(x, w.packed, w.meta)``. Explain sees the
    same rewrite. Calls without such an argument are returned unchanged.
    """
    for value in (*args, *kwargs.values()):
        hook = getattr(type(value), "__backplane_entry__", None)
        if hook is not None:
            return hook(entry, args, kwargs)
    return entry, args, kwargs


def _signature(entry):
    params = []
    for a in entry["args"]:
        if a["variadic"]:
            kind = inspect.Parameter.VAR_POSITIONAL
        elif a["keyword_only"]:
            kind = inspect.Parameter.KEYWORD_ONLY
        else:
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        default = inspect.Parameter.empty if a["required"] or a["variadic"] else a["default"]
        params.append(inspect.Parameter(a["name"], kind, default=default))
    return inspect.Signature(params)


def _docstring(entry):
    lines = [entry["doc"], "", "Arguments:"]
    for a in entry["args"]:
        doc = f": {a['doc']}" if a["doc"] else ""
        lines.append(f"    {a['name']} ({a['type']}){doc}")
    lines += ["", f"Dispatched by Backplane; backplane.backends.explain({entry['name']!r}, ...) says which "
                  "implementation runs and why."]
    return "\n".join(lines)


def _make(entry):
    name = entry["name"]
    module_name, func_name = entry["python"].rsplit(".", 1)
    named = return_types.for_entry(entry["python"])  # a tuple result as torch.return_types names it

    def op(*args, **kwargs):
        override = python_native.lookup(name, *args, **kwargs)
        if override is not None:
            return override(*args, **kwargs)
        target, args, kwargs = redirect(name, args, kwargs)
        for hook in _hooks.get(target, ()):
            hook(*args, **kwargs)
        out = _C.op_call(target, args, kwargs)
        return named(*out) if named is not None and isinstance(out, tuple) and len(out) == len(named._fields) else out

    op.__name__ = op.__qualname__ = func_name
    op.__module__ = module_name
    op.__doc__ = _docstring(entry)
    op.__signature__ = _signature(entry)
    return op


def _module(name):
    """The module `name`, imported, or made (and attached to its parent) when the package has none."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        parent, _, leaf = name.rpartition(".")
        module = types.ModuleType(name, f"Backplane ops of {name} (generated from their C++ declarations).")
        module.__all__ = []
        sys.modules[name] = module
        if parent:
            setattr(_module(parent), leaf, module)
        return module


def install():
    """Puts every declared entry point in its module, and in the modules of its aliases
    (``import backplane`` does this once)."""
    for entry in _C.op_entries():
        fn = _make(entry)
        for place in [entry["python"], *entry["python_aliases"]]:
            module_name, func_name = place.rsplit(".", 1)
            module = _module(module_name)
            setattr(module, func_name, fn)
            names = getattr(module, "__all__", None)
            if isinstance(names, list) and func_name not in names:
                names.append(func_name)
