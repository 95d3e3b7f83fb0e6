"""backplane.backends.opt_einsum: einsum contraction-order optimisation.

Backplane computes contraction paths natively in C++, so ``is_available()``
is True without the ``opt_einsum`` Python package, ``get_opt_einsum()``
returns Backplane's native module (with ``contract_path``), and ``enabled``
/ ``strategy`` are validated on every path, direct assignment included
(docs/differences.md). ``backplane.einsum`` contracts three or more operands
along the path of ``strategy`` ("auto", "greedy", "optimal", as PyTorch, and
"dp", "branch-1", "branch-2", "branch-all", opt_einsum's other optimisers),
or left to right while ``enabled`` is False.
"""

import contextlib

from .. import _C, _errors
from . import _props

__all__ = ["is_available", "get_opt_einsum", "enabled", "strategy", "flags", "set_flags"]

_STRATEGIES = ("auto", "greedy", "optimal", "dp", "branch-1", "branch-2", "branch-all")


def is_available():
    """Whether optimised contraction paths are available: always (native path search)."""
    return True


def get_opt_einsum():
    """Backplane's native path optimiser, a module shaped like ``opt_einsum`` (``contract_path``, ``paths``).

    PyTorch returns the ``opt_einsum`` package, or None without it; Backplane
    needs no package, so this is never None (docs/differences.md).
    """
    from . import _opt_einsum_native
    return _opt_einsum_native


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
                         doc="einsum contraction-path strategy: auto, greedy, optimal, dp, branch-1, branch-2 "
                             "or branch-all"),
})
