"""backplane.nn: attention controls (and, as they land, the nn modules)."""

from . import attention

__all__ = ["attention"]
