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

from .. import _C
from . import _props

__all__ = ["available_dsls", "all_dsls", "register", "lookup", "get_dsl_operations", "disable_operations",
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
    if not isinstance(value, str) or not value:
        raise TypeError(f"python_native: {what} must be a non-empty str, got {value!r}")
    return value


class DSL:
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
            raise RuntimeError(f"not allowed to set {self.name} DSL flags after disable_global_flags; "
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
        raise ValueError(f"python_native.register: DSL name {dsl!r} must be an identifier that is not private "
                         "and not one of the module's own names")
    if not callable(fn):
        raise TypeError(f"python_native.register: fn must be callable, got {type(fn).__name__}")
    if predicate is not None and not callable(predicate):
        raise TypeError(f"python_native.register: predicate must be callable or None, got {type(predicate).__name__}")
    with _lock:
        controller = _dsls.setdefault(dsl, DSL(dsl))
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


def get_dsl_operations(dsl_name):
    """Sorted names of the ops ``dsl_name`` overrides ([] for an unknown DSL)."""
    with _lock:
        return sorted({o[1] for o in _overrides if o[0] == dsl_name})


def disable_operations(*ops):
    with _lock:
        _disabled["op"].update(_check_name("op", o) for o in ops)


def enable_operations(*ops):
    with _lock:
        _disabled["op"].difference_update(_check_name("op", o) for o in ops)


def operations_disabled(*ops):
    """A thread-local scope in which no override of ``ops`` runs."""
    return _scope("op", [_check_name("op", o) for o in ops])


def is_operation_disabled(op):
    return _is_disabled("op", op)


def is_dsl_disabled(dsl):
    return _is_disabled("dsl", dsl)


def disable_dispatch_keys(*keys):
    with _lock:
        _disabled["key"].update(_check_name("dispatch_key", k) for k in keys)


def enable_dispatch_keys(*keys):
    with _lock:
        _disabled["key"].difference_update(_check_name("dispatch_key", k) for k in keys)


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
