"""backplane.backends.opt_einsum: einsum contraction-order optimisation.

Backplane computes contraction paths natively in C++, so ``is_available()``
is True without the ``opt_einsum`` Python package (docs/differences.md), and
``enabled`` / ``strategy`` are validated on every path, direct assignment
included.
"""

import contextlib

from .. import _C, _errors
from . import _props

__all__ = ["is_available", "get_opt_einsum", "enabled", "strategy", "flags", "set_flags"]

_STRATEGIES = ("auto", "greedy", "optimal")


def is_available():
    """Whether optimised contraction paths are available: always (native path search)."""
    return True


def get_opt_einsum():
    """The ``opt_einsum`` Python package if it is installed, else None (Backplane does not need it)."""
    try:
        import opt_einsum
    except ImportError:
        return None
    return opt_einsum


def _check_strategy(strategy, enabled):
    subject = "backplane.backends.opt_einsum.strategy"
    allowed = ", ".join(_STRATEGIES)
    if not isinstance(strategy, str):
        raise _errors.bad_type(subject, strategy, f"a str (one of: {allowed})")
    if strategy not in _STRATEGIES:
        raise _errors.bad_value(subject, strategy, allowed,
                                message=f"`strategy` must be one of the following: [{allowed}] but is {strategy}")
    if not enabled:
        raise _errors.bad_value(subject, strategy, "a strategy only while enabled is True",
                                message=f"opt_einsum is not enabled, so setting a `strategy` to {strategy} will not "
                                        "be meaningful. einsum will contract from left to right. Please set "
                                        "`enabled` to `True` as well or unset `strategy`.")


def _assignments(enabled, strategy):
    out = []
    if enabled is not None:
        _props.check_bool("opt_einsum.enabled", enabled)
        out.append(("opt_einsum.enabled", enabled))
    if strategy is not None:
        _check_strategy(strategy, enabled if enabled is not None else _C.flag_get("opt_einsum.enabled"))
        out.append(("opt_einsum.strategy", strategy))
    return out


def set_flags(_enabled=None, _strategy=None):
    """Sets ``enabled`` then ``strategy`` (both validated first); returns the previous (enabled, strategy)."""
    orig = (_C.flag_get("opt_einsum.enabled"), _C.flag_get("opt_einsum.strategy"))
    for path, value in _assignments(_enabled, _strategy):
        _C.flag_set(path, value)
    return orig


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """Scoped einsum settings for this thread; None leaves a setting unchanged."""
    with _C.FlagScope(_assignments(enabled, strategy)):
        yield


def _strategy_set(self, value):
    _check_strategy(value, _C.flag_get("opt_einsum.enabled"))
    _C.flag_set("opt_einsum.strategy", value)


_props.install_module_properties(__name__, "opt_einsum", {
    "strategy": property(lambda self: _C.flag_get("opt_einsum.strategy"), _strategy_set,
                         doc="einsum contraction-path strategy: auto, greedy or optimal"),
})
