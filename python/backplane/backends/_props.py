"""Module properties generated from the C++ flag table.

Note [Python flag properties]
Every row of the flag table marked as a property becomes a Python property
on its module (``backplane.backends.cudnn.benchmark``) or on a small
precision object (``backplane.backends.cudnn.conv.fp32_precision``). Reading
calls the C++ getter, writing the C++ setter: Python keeps no copy, so C++,
the CLI and Python always agree. Modules get properties by swapping their
class for a ModuleType subclass, which keeps the module object itself.
"""

import sys
import types

from .. import _C

_ROWS = _C.flag_rows()


def rows_of(module_path):
    """Flag rows whose module path is ``module_path`` ("" is the package)."""
    return [r for r in _ROWS if r["module"] == module_path]


def flag_property(path, doc=""):
    """A property that reads and writes flag ``path`` in C++.

    fp32 precision nodes read their effective value (Note [fp32 precision
    tree]): "none" inherits, so the property shows what applies.
    """
    return property(lambda self: _C.flag_get_resolved(path), lambda self, value: _C.flag_set(path, value), doc=doc)


def _generated_properties(module_path):
    return {
        r["name"]: flag_property(r["path"], r["doc"]) for r in rows_of(module_path) if r["prop"]
    }


class GuardedModule(types.ModuleType):
    """A backends module whose functions, classes and submodules cannot be
    replaced by assignment.

    Note [Module attributes]
    ``backends.cuda.cublas_workspace_size = -5`` used to replace the function
    with -5 (a plain module takes any assignment), so every later call failed
    far from the typo. Assigning to a public name that holds a function, a
    class or a submodule raises AttributeError naming it and saying how to
    set the value; flag properties (``cudnn.benchmark = True``) and new
    names are assigned as before.
    """

    def __setattr__(self, name, value):
        current = self.__dict__.get(name)
        if not name.startswith("_") and (callable(current) or isinstance(current, types.ModuleType)):
            kind = ("submodule" if isinstance(current, types.ModuleType)
                    else "class" if isinstance(current, type) else "function")
            hint = f" (call {self.__name__}.{name}(...) instead)" if kind == "function" else ""
            raise AttributeError(f"{self.__name__}.{name} is a {kind} and cannot be replaced by assignment{hint}")
        super().__setattr__(name, value)


def guard_module(module_name):
    """Give a backends module without flag properties the guard of Note [Module attributes]."""
    module = sys.modules[module_name]
    if not isinstance(module, GuardedModule):
        module.__class__ = type(f"{module_name.rsplit('.', 1)[-1]}_module", (GuardedModule,),
                                {"__doc__": module.__doc__})
    return module


def install_module_properties(module_name, module_path, extra=None):
    """Give module ``module_name`` the properties of its flag rows, plus ``extra``
    (and the guard of Note [Module attributes])."""
    module = sys.modules[module_name]
    namespace = _generated_properties(module_path)
    namespace.update(extra or {})
    namespace["__doc__"] = module.__doc__
    cls = type(f"{module_name.rsplit('.', 1)[-1]}_module", (GuardedModule,), namespace)
    module.__class__ = cls
    return module


class _PropertyObject:
    """Base of the sub-objects (cuda.matmul, cudnn.conv, mkldnn.matmul, ...).

    Like PyTorch's, they accept only their known attributes: anything else
    raises AttributeError("Unknown attribute <name>").
    """

    _path = ""

    def __getattr__(self, name):
        # Only reached when normal lookup failed.
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if not isinstance(getattr(type(self), name, None), property):
            raise AttributeError(f"Unknown attribute {name}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        fields = ", ".join(
            f"{k}={getattr(self, k)!r}" for k, v in vars(type(self)).items() if isinstance(v, property)
        )
        return f"<backplane.backends.{self._path} {fields}>"


def property_object(module_path, extra=None):
    """An instance exposing the flag rows of ``module_path`` as attributes."""
    namespace = _generated_properties(module_path)
    namespace.update(extra or {})
    namespace["_path"] = module_path
    cls = type(module_path.replace(".", "_"), (_PropertyObject,), namespace)
    return cls()


def check_bool(name, value):
    """PyTorch's setter type rule: a real bool, nothing merely truthy."""
    if not isinstance(value, bool):
        raise TypeError(f"backplane.backends.{name} expects a bool, but got {type(value).__name__}")
    return value


def scope(assignments):
    """A thread-local scope applying ``[(flag path, value), ...]`` whole or not at all."""
    return _C.FlagScope([(path, value) for path, value in assignments if value is not None])


class FlagsSpec:
    """The ``flags(...)`` / ``set_flags(...)`` pair of one module.

    ``params`` lists ``(name, default, read, to_flags)``: the parameter name
    and PyTorch's default for ``flags()``, a function reading the current
    value, and a function turning a value into ``[(flag path, value), ...]``.

    Differences from PyTorch (docs/differences.md): ``set_flags`` converts and
    validates every argument before applying any, and ``flags()`` is a
    thread-local scope rather than a global mutation.
    """

    def __init__(self, params):
        self.params = params

    def snapshot(self):
        return tuple(read() for _, _, read, _ in self.params)

    def assignments(self, values):
        out = []
        for (name, _, _, to_flags), value in zip(self.params, values):
            if value is not None:
                out.extend(to_flags(value))
        return out

    def set_flags(self, *values):
        if len(values) > len(self.params):
            raise TypeError(f"set_flags() takes at most {len(self.params)} arguments ({len(values)} given)")
        orig = self.snapshot()
        assignments = self.assignments(values)
        for path, value in assignments:  # validate everything first
            _C.flag_raw_value(path, value)
        for path, value in assignments:
            _C.flag_set(path, value)
        return orig

    def scope(self, values):
        return _C.FlagScope(self.assignments(values))


def flag_param(name, path, default):
    """A FlagsSpec parameter that is exactly one flag row."""
    return (name, default, lambda: _C.flag_get(path), lambda v: [(path, v)])
