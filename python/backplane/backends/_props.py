"""Module properties generated from the C++ flag table.

Note [Python flag properties]
Every row of the flag table marked as a property becomes a Python property
on its module (``backplane.backends.cudnn.benchmark``) or on a small
precision object (``backplane.backends.cudnn.conv.fp32_precision``). Reading
calls the C++ getter, writing the C++ setter: Python keeps no copy, so C++,
the CLI and Python always agree. Modules get properties by swapping their
class for a ModuleType subclass, which keeps the module object itself.

Note [Modules refuse unknown attributes]
Assigning a misspelt flag (``cudnn.benchmrk = True``) would otherwise create
a new attribute and silently change nothing (PyTorch's modules accept it).
The module class refuses public names the module does not already have; a
submodule being imported, private names (``_x``) and dunders still go
through, and so does replacing an existing attribute (monkeypatching).
"""

import sys
import types

from .. import _C
from .. import _errors

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


_MISSING = object()


class GuardedModule(types.ModuleType):
    """A backends module that refuses the assignments that are always mistakes.

    Note [Module attributes]
    Two typos used to pass silently: ``cudnn.benchmrk = True`` created a new
    attribute and changed nothing (PyTorch's modules accept it), and
    ``backends.cuda.cublas_workspace_size = -5`` replaced the function, so
    every later call failed far from the typo. So a public name the module
    does not have is refused (Note [Modules refuse unknown attributes]), and
    so is replacing a function, class or submodule by something that is not
    one of those. Flag properties assign as usual; private names, a submodule
    being imported, and replacing a function by another callable
    (monkeypatching in tests) still go through.
    """

    def __setattr__(self, name, value):
        if not name.startswith("_"):
            current = self.__dict__.get(name, _MISSING)
            importing = isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}"
            if current is _MISSING and not importing and not isinstance(getattr(type(self), name, None), property):
                raise AttributeError(f"module '{self.__name__}' has no attribute '{name}', and backends modules "
                                     "refuse new attributes (a misspelt flag would otherwise change nothing)")
            replaceable = callable(current) or isinstance(current, types.ModuleType)
            if current is not _MISSING and replaceable and not (callable(value) or importing):
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


def property_object(module_path, extra=None, class_name=None):
    """An instance exposing the flag rows of ``module_path`` as attributes.

    ``class_name`` names its class where PyTorch's class has a public name
    (``cuda.cuBLASModule``, the type of ``cuda.matmul``).
    """
    namespace = _generated_properties(module_path)
    namespace.update(extra or {})
    namespace["_path"] = module_path
    cls = type(class_name or module_path.replace(".", "_"), (_PropertyObject,), namespace)
    return cls()


def check_bool(name, value):
    """PyTorch's setter type rule: a real bool, nothing merely truthy (None included).

    Raises a TypeError that is also a RuntimeError, as PyTorch's setters raise.
    """
    if not isinstance(value, bool):
        raise _errors.bad_type(f"backplane.backends.{name}", value, "a bool")
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
            raise _errors.bad_type("set_flags", values, f"at most {len(self.params)} arguments ({len(values)} given)")
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


def verbose_level(subject, level, levels):
    """The verbose level as an int: a bool counts as 0 / 1 (PyTorch passes it on as an int)."""
    if isinstance(level, bool):
        return int(level)
    if not isinstance(level, int):
        raise _errors.bad_type(subject, level, "an int level (" + ", ".join(levels) + ")")
    if not 0 <= level < len(levels):
        raise _errors.bad_value(subject, level, ", ".join(levels))
    return level
