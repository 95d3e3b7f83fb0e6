"""backplane.backends.python_native: user-registered implementations of ops, grouped by DSL.

``register(dsl, op, fn, predicate=None)`` adds an override of op ``op``
("matmul", "sdpa", ...) written with some kernel DSL (Triton, CuTe DSL,
plain NumPy...). Ops ask ``lookup(op, *args)`` before their own dispatch:
overrides are tried newest first; the first whose DSL, op and dispatch key
are enabled and whose predicate accepts the arguments runs. No DSL is
registered by default.

Each registered DSL appears as a module attribute (``python_native.triton``)
with ``name``, ``available``, ``version``, ``enabled``, ``enable()``,
``disable()`` and ``disabled()``. Disabling through ``disable_*`` /
``enable_*`` / ``.enabled`` is process-wide; the context managers
``operations_disabled(...)`` and ``<dsl>.disabled()`` are thread-local
scopes (docs/differences.md).
"""

import contextlib
import threading

from .. import _C, _errors
from . import _props

__all__ = ["DSLController", "available_dsls", "all_dsls", "register", "lookup", "get_dsl_operations", "disable_operations",
           "enable_operations", "operations_disabled", "is_operation_disabled", "is_dsl_disabled",
           "disable_dispatch_keys", "enable_dispatch_keys"]

_lock = threading.RLock()
_dsls = {}          # name -> DSL controller, in registration order
_overrides = []     # (dsl, op, fn, predicate, dispatch_key), in registration order
_disabled = {"dsl": set(), "op": set(), "key": set()}
_local = threading.local()


def _scoped(kind):
    """This thread's scoped disables of one kind (a list used as a stack of sets)."""
    stack = getattr(_local, kind, None)
    if stack is None:
        stack = []
        setattr(_local, kind, stack)
    return stack


def _is_disabled(kind, name):
    with _lock:
        if name in _disabled[kind]:
            return True
    return any(name in s for s in _scoped(kind))


@contextlib.contextmanager
def _scope(kind, names):
    stack = _scoped(kind)
    stack.append(frozenset(names))
    try:
        yield
    finally:
        stack.pop()


def _check_name(what, value):
    if not isinstance(value, str):
        raise _errors.bad_type(f"backplane.backends.python_native: {what}", value, "a non-empty str")
    if not value:
        raise _errors.bad_value(f"backplane.backends.python_native: {what}", value, "a non-empty str")
    return value


class DSLController:
    """The controller of one registered DSL."""

    def __init__(self, name, version=None):
        self.name = name
        self.version = version

    @property
    def available(self):
        # A registered DSL's functions are already imported Python callables.
        return True

    @property
    def backend(self):
        raise AttributeError(f"{self.name} DSL has no configurable backend")

    @property
    def enabled(self):
        return not is_dsl_disabled(self.name)

    @enabled.setter
    def enabled(self, value):
        _props.check_bool(f"python_native.{self.name}.enabled", value)
        if _C.flags_frozen():
            raise _errors.runtime(f"python_native.{self.name}.enabled",
                                  f"not allowed to set {self.name} DSL flags after disable_global_flags; "
                                  "please use flags() context manager instead")
        self.enable() if value else self.disable()

    def disable(self):
        with _lock:
            _disabled["dsl"].add(self.name)

    def enable(self):
        with _lock:
            _disabled["dsl"].discard(self.name)

    def disabled(self):
        """A thread-local scope in which this DSL's overrides do not run."""
        return _scope("dsl", [self.name])

    def __repr__(self):
        return f"<python_native DSL {self.name!r} enabled={self.enabled}>"


def register(dsl, op, fn, predicate=None, dispatch_key="CPU"):
    """Registers ``fn`` as an implementation of ``op`` written in DSL ``dsl``.

    ``predicate(*args, **kwargs)`` (optional) says whether ``fn`` takes a
    given call; ``dispatch_key`` ("CPU", "CUDA") is the device it serves.
    Returns the DSL's controller.
    """
    _check_name("dsl", dsl)
    _check_name("op", op)
    _check_name("dispatch_key", dispatch_key)
    if not dsl.isidentifier() or dsl.startswith("_") or dsl in __all__:
        raise _errors.bad_value("python_native.register: dsl", dsl,
                                "an identifier that is not private and not one of the module's own names")
    if not callable(fn):
        raise _errors.bad_type("python_native.register: fn", fn, "a callable")
    if predicate is not None and not callable(predicate):
        raise _errors.bad_type("python_native.register: predicate", predicate, "a callable or None")
    with _lock:
        controller = _dsls.setdefault(dsl, DSLController(dsl))
        _overrides.append((dsl, op, fn, predicate, dispatch_key))
    return controller


def lookup(op, *args, dispatch_key="CPU", **kwargs):
    """The override to run for this call of ``op``, or None to use Backplane's own dispatch."""
    if is_operation_disabled(op) or _is_disabled("key", dispatch_key):
        return None
    with _lock:
        candidates = [o for o in reversed(_overrides) if o[1] == op and o[4] == dispatch_key]
    for dsl, _, fn, predicate, _ in candidates:
        if is_dsl_disabled(dsl):
            continue
        if predicate is None or predicate(*args, **kwargs):
            return fn
    return None


# Parameter names are PyTorch 2.15's (op_symbols, op_symbol, dsl_name,
# dispatch_keys, lib_symbol), so keyword calls written for it work.

def get_dsl_operations(dsl_name, lib_symbol="aten"):
    """Sorted names of the ops ``dsl_name`` overrides ([] for an unknown DSL).

    ``lib_symbol`` is the operator library; every Backplane op is in the
    default one ("aten"), so another library has none.
    """
    _check_name("lib_symbol", lib_symbol)
    if lib_symbol != "aten":
        return []
    with _lock:
        return sorted({o[1] for o in _overrides if o[0] == dsl_name})


def _checked_names(what, names):
    # All checked before any is applied.
    return [_check_name(what, n) for n in names]


def disable_operations(*op_symbols):
    names = _checked_names("op_symbol", op_symbols)
    with _lock:
        _disabled["op"].update(names)


def enable_operations(*op_symbols):
    names = _checked_names("op_symbol", op_symbols)
    with _lock:
        _disabled["op"].difference_update(names)


def operations_disabled(*op_symbols):
    """A thread-local scope in which no override of ``op_symbols`` runs."""
    return _scope("op", _checked_names("op_symbol", op_symbols))


def is_operation_disabled(op_symbol):
    return _is_disabled("op", op_symbol)


def is_dsl_disabled(dsl_name):
    return _is_disabled("dsl", dsl_name)


def disable_dispatch_keys(*dispatch_keys):
    names = _checked_names("dispatch_key", dispatch_keys)
    with _lock:
        _disabled["key"].update(names)


def enable_dispatch_keys(*dispatch_keys):
    names = _checked_names("dispatch_key", dispatch_keys)
    with _lock:
        _disabled["key"].difference_update(names)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    with _lock:
        if name in _dsls:
            return _dsls[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _all_dsls(self):
    with _lock:
        return list(_dsls)


def _available_dsls(self):
    with _lock:
        return [name for name, d in _dsls.items() if d.available]


_props.install_module_properties(__name__, "python_native", {
    "all_dsls": property(_all_dsls, doc="Every registered DSL, in registration order"),
    "available_dsls": property(_available_dsls, doc="Registered DSLs whose runtime is usable"),
})
