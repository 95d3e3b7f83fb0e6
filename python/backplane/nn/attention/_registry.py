"""The flash-attention implementation registry of PyTorch 2.15's ``torch.nn.attention``.

A provider registers a named implementation with the function that installs
it (``register_flash_attention_impl("FA4", register_fn=...)``); a user opts
in with ``activate_flash_attention_impl("FA4")``, which first restores the
default and then calls that function once. If it returns a handle (an
object with ``remove()``), the implementation is the current one until
``restore_flash_attention_impl()`` calls ``handle.remove()``; a function that
returns None installs something that cannot be undone, and the current
implementation stays None, as in PyTorch.

"FA3" and "FA4" are listed from the start, as in PyTorch. They are
FlashAttention 3 / 4 for Hopper / Blackwell GPUs, which Backplane does not
ship: activating them raises ModuleNotFoundError naming the missing module.

What ``register_fn`` installs is real: it calls ``install_flash_attention``
(Backplane's counterpart of registering a kernel with PyTorch's dispatcher),
and the function joins the SDPA implementation list as ``flash:<name>``, at
the front, governed by ``enable_flash_sdp`` and shown by ``explain``; the
handle it returns takes it out again. Process-wide, like PyTorch's:
activation installs into a dispatcher that all threads share.

    def register():
        return install_flash_attention("myfa", my_attention)   # my_attention(q, k, v, attn_mask, dropout_p,
                                                                #              is_causal, scale, enable_gqa)
    register_flash_attention_impl("myfa", register_fn=register)
    activate_flash_attention_impl("myfa")                       # scaled_dot_product_attention now runs it
"""

import logging
import threading

from ... import _C, _errors

__all__ = ["register_flash_attention_impl", "activate_flash_attention_impl", "list_flash_attention_impls",
           "current_flash_attention_impl", "restore_flash_attention_impl", "install_flash_attention"]

_log = logging.getLogger(__name__)
_lock = threading.RLock()
_impls = {}        # name -> register_fn
_active = None     # (name, handle) while an implementation with a handle is active


def _missing_module(impl, module):
    def register():
        raise ModuleNotFoundError(f"No module named '{module}': flash attention implementation {impl} needs it, "
                                  "and Backplane does not ship it", name=module)
    return register


def register_flash_attention_impl(impl, *, register_fn):
    """Registers (or replaces) ``register_fn`` as the installer of flash attention implementation ``impl``.

    For providers; users call activate_flash_attention_impl. ``register_fn()``
    takes no arguments and may return a handle with ``remove()``.
    """
    with _lock:
        _impls[impl] = register_fn


def activate_flash_attention_impl(impl):
    """Restores the default, then installs the registered implementation ``impl``.

    Unknown names raise ValueError (also a RuntimeError) listing the registered ones.
    """
    with _lock:
        restore_flash_attention_impl(_raise_warn=False)
        register_fn = _impls.get(impl)
        if register_fn is None:
            names = list_flash_attention_impls()
            raise _errors.bad_value("activate_flash_attention_impl", impl, ", ".join(map(str, names)),
                                    message=f"Unknown flash attention impl '{impl}'. Available implementations: "
                                            f"{names}")
        handle = register_fn()
        global _active
        if handle is not None:
            _active = (impl, handle)


def list_flash_attention_impls():
    """The registered implementation names, sorted."""
    with _lock:
        return sorted(_impls)


def current_flash_attention_impl():
    """The name of the activated implementation, or None for the default (FA2)."""
    with _lock:
        return None if _active is None else _active[0]


def restore_flash_attention_impl(_raise_warn=True):
    """Goes back to the default implementation (FA2), removing the active one's handle.

    With nothing active, logs a warning (unless ``_raise_warn`` is false).
    """
    global _active
    with _lock:
        if _active is not None:
            _active[1].remove()
        elif _raise_warn:
            _log.warning("Trying to restore default FA2 impl when no custom impl was activated")
        _active = None


class _Installed:
    """The handle of an installed implementation: ``remove()`` takes it out of the SDPA list (once)."""

    def __init__(self, list_name):
        self.name = list_name
        self._removed = False

    def remove(self):
        with _lock:
            if not self._removed:
                _C.sdpa_remove_external(self.name)
                self._removed = True

    def __repr__(self):
        return f"<flash attention implementation {self.name}{' (removed)' if self._removed else ''}>"


def install_flash_attention(name, fn, *, device="cpu", accepts=None):
    """Installs ``fn`` as the SDPA implementation ``flash:<name>`` for tensors on ``device``; returns a handle.

    ``fn(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)`` gets the call's
    Tensors (``scale`` already resolved) and returns the output, (..., L, Ev) of the query's dtype, as a
    Tensor or anything ``asarray`` takes. ``accepts`` (same arguments, returns a bool) may refuse calls;
    dispatch then moves on to the built-in implementations. The implementation is tried first, under
    ``enable_flash_sdp``; ``handle.remove()`` (``restore_flash_attention_impl`` calls it) takes it out.
    """
    if not isinstance(name, str) or not callable(fn) or (accepts is not None and not callable(accepts)):
        raise TypeError("install_flash_attention(name: str, fn: callable, *, device='cpu', accepts=None or callable)")
    return _Installed(_C.sdpa_install_external(name, str(device), fn, accepts))


register_flash_attention_impl("FA3", register_fn=_missing_module("FA3", "flash_attn_interface"))
register_flash_attention_impl("FA4", register_fn=_missing_module("FA4", "flash_attn"))
