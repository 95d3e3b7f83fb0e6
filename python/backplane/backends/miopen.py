"""backplane.backends.miopen: ROCm's MIOpen; ``immediate`` is held as state on this (CUDA) build."""

import contextlib

from . import _props

__all__ = ["immediate", "flags", "set_flags"]

_flags_spec = _props.FlagsSpec([_props.flag_param("immediate", "miopen.immediate", False)])


def set_flags(_immediate=None):
    """Sets ``immediate`` process-wide; returns the previous value as a 1-tuple."""
    return _flags_spec.set_flags(_immediate)


@contextlib.contextmanager
def flags(immediate=False):
    """Scoped ``immediate`` for this thread."""
    with _flags_spec.scope((immediate,)):
        yield


_props.install_module_properties(__name__, "miopen")
