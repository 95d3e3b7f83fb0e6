"""backplane.backends.xeon: mirrors ``torch.backends.xeon``, whose content is
the CPU launcher ``run_cpu`` (``python -m backplane.backends.xeon.run_cpu``)."""

import importlib

__all__ = ["run_cpu"]


def __getattr__(name):
    # Imported on first use rather than here: `python -m ...xeon.run_cpu`
    # imports this package first, and an eager import would make runpy warn.
    if name == "run_cpu":
        return importlib.import_module(".run_cpu", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
