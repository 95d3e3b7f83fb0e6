"""How this Backplane was built, as ``torch.__config__``.

``show()`` returns the build summary as text (the configure summary that
``backplane info`` also prints: version, compiler, build type, CUDA toolkit,
each backend built or not and why), plus the Python side: the interpreter,
NumPy, ml_dtypes and where the command-line tool is. ``backplane.show_config()``
prints it. What is *available* on this machine (devices, library versions
loaded at run time) is ``backplane info`` / ``backplane.backends.list_backends()``.
"""

import platform

from . import _C

__all__ = ["show"]


def _module_version(name):
    try:
        module = __import__(name)
    except ImportError:
        return None
    return getattr(module, "__version__", "unknown version")


def _cli_line():
    from ._cli import cli_path
    try:
        return cli_path()
    except FileNotFoundError:
        return "not found (build it with `make build`, or install the package with `pip install .`)"


def show():
    """The build summary, one fact a line (a str, as torch.__config__.show())."""
    lines = [f"Backplane {_C.__version__} built with:",
             f"  - compiler: {_C.compiler}",
             f"  - build type: {_C.build_type}",
             f"  - CUDA toolkit: {_C.cuda_toolkit or 'none (built without CUDA)'}",
             "  - backends (✓ built, ✗ not built):"]
    width = max(len(name) for name in _C.built_with)
    for name, built in _C.built_with.items():
        lines.append(f"      {'✓' if built else '✗'} {name.ljust(width)}  {_C.built_why[name]}")
    ml_dtypes = _module_version("ml_dtypes")
    lines += [f"  - Python {platform.python_version()} ({platform.python_implementation()})",
              f"  - NumPy {_module_version('numpy')}",
              "  - ml_dtypes " + (ml_dtypes if ml_dtypes else "not installed (no bfloat16 NumPy arrays: "
                                  "pip install 'backplane[bf16]')"),
              f"  - command-line tool: {_cli_line()}",
              "What this machine can use (devices, run-time library versions): `backplane info`."]
    return "\n".join(lines) + "\n"
