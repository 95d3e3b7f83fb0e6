"""backplane.backends.nnpack: NNPACK is not built; its switch is held as state (flag nnpack.enabled)."""

import contextlib

from .. import _C, _errors
from . import _props

__all__ = ["is_available", "flags", "set_flags"]


def is_available():
    """Whether NNPACK is built and initialises on this CPU: never in this build."""
    return _C.nnpack_is_available()


def _enabled_assignments(value):
    _props.check_bool("nnpack.enabled", value)
    return [("nnpack.enabled", value)]


_flags_spec = _props.FlagsSpec([("enabled", False, lambda: _C.flag_get("nnpack.enabled"), _enabled_assignments)])


def set_flags(_enabled):
    """Sets NNPACK's switch (None is refused, as in PyTorch); returns the previous value as a 1-tuple."""
    if _enabled is None:
        raise _errors.bad_type("backplane.backends.nnpack.set_flags", _enabled, "a bool")
    return _flags_spec.set_flags(_enabled)


@contextlib.contextmanager
def flags(enabled=False):
    """Scoped NNPACK switch for this thread (PyTorch's default disables it)."""
    if enabled is None:
        raise _errors.bad_type("backplane.backends.nnpack.flags", enabled, "a bool")
    with _flags_spec.scope((enabled,)):
        yield


_props.install_module_properties(__name__, "nnpack")
