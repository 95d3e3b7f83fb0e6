"""Finding the ``backplane`` command-line tool from Python.

The Python faces of CLI commands (``backplane.backends.xeon.run_cpu``) run
the C++ tool rather than re-implementing it. Search order: ``$BACKPLANE_CLI``;
the copy installed inside the package (``backplane/bin``, by ``pip install``);
the development build named in ``_build_info.py`` (written by CMake); then
``backplane`` on PATH.
"""

import os
import shutil

__all__ = ["cli_path"]


def _is_executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _development_build_cli():
    try:
        from . import _build_info
    except ImportError:  # an installed package has no build folder
        return None
    path = os.path.join(_build_info.build_dir, "bin", "backplane")
    return path if _is_executable(path) else None


def cli_path():
    """The path of the ``backplane`` executable; FileNotFoundError if there is none."""
    override = os.environ.get("BACKPLANE_CLI")
    if override:
        if not _is_executable(override):
            raise FileNotFoundError(f"BACKPLANE_CLI={override!r} is not an executable file")
        return override
    packaged = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "backplane")
    found = (packaged if _is_executable(packaged) else None) or _development_build_cli() or shutil.which("backplane")
    if found is None:
        raise FileNotFoundError(
            "cannot find the backplane command-line tool: build it (make build), put it on PATH, "
            "or set BACKPLANE_CLI to its path")
    return found
