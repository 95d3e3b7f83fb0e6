"""backplane.nn: attention controls (and, as they land, the nn modules)."""

from . import attention, functional

__all__ = ["attention", "functional"]
