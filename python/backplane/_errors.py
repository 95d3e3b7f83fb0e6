"""Errors raised from Python, with the same classes and data as those raised from C++.

Every Backplane error is catchable both as what PyTorch raises for the same
mistake (nearly always ``RuntimeError``) and as the natural Python class:
``BackplaneTypeError`` derives from ``TypeError`` and ``RuntimeError``,
``BackplaneValueError`` from ``ValueError`` and ``RuntimeError`` (classes
made in python/src/bind_errors.cpp). Each carries ``.subject`` (the flag or
function), ``.value`` (what was received) and ``.allowed`` (what would have
been accepted), as the C++ ones do.
"""

from . import _C

BackplaneTypeError = _C.BackplaneTypeError
BackplaneValueError = _C.BackplaneValueError
BackplaneRuntimeError = _C.BackplaneRuntimeError
BackplaneNotImplementedError = _C.BackplaneNotImplementedError
BackplaneIndexError = _C.BackplaneIndexError


class BackplaneUnsupportedAttributeError(BackplaneNotImplementedError, AttributeError):
    """A function that this platform does not have (mps.get_name on Linux).

    PyTorch raises AttributeError there (the binding is missing from its
    extension module); the natural class is NotImplementedError. This one is
    both, and so also a RuntimeError.
    """


def _make(cls, message, subject, value, allowed):
    exc = cls(message)
    exc.subject, exc.value, exc.allowed = subject, value, allowed
    return exc


def type_name(value):
    return type(value).__name__


def bad_type(subject, value, allowed, message=None):
    """``<subject> expects <allowed>, but got <type>`` (TypeError and RuntimeError)."""
    got = type_name(value)
    return _make(BackplaneTypeError, message or f"{subject} expects {allowed}, but got {got}", subject, got, allowed)


def bad_value(subject, value, allowed, message=None):
    """``<subject>: expected <allowed>, got <value>`` (ValueError and RuntimeError)."""
    text = message or f"{subject}: expected {allowed}, got {value!r}"
    return _make(BackplaneValueError, text, subject, repr(value), allowed)


def runtime(subject, message):
    """A state that forbids the call (RuntimeError)."""
    return _make(BackplaneRuntimeError, message, subject, "", "")


def not_implemented(subject, message):
    """Not built / not supported here (NotImplementedError, itself a RuntimeError)."""
    return _make(BackplaneNotImplementedError, message, subject, "", "")


def unsupported_attribute(subject, message):
    """Not available on this platform (NotImplementedError, RuntimeError and AttributeError)."""
    return _make(BackplaneUnsupportedAttributeError, message, subject, "", "")
