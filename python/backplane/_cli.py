"""Finding and running the ``backplane`` command-line tool from Python.

The Python faces of CLI commands (``backplane.backends.xeon.run_cpu``) run
the C++ tool rather than re-implementing it, and the ``backplane`` console
script and ``python -m backplane`` are the tool itself: ``main()`` replaces
the interpreter with it (``os.execv``), so arguments, exit status and signals
(Ctrl-C included) are the tool's own.

Search order: ``$BACKPLANE_CLI``; the copy installed inside the package
(``backplane/bin``, by ``pip install``); the development build named in
``_build_info.py`` (written by CMake); then ``backplane`` on PATH, skipping
the console scripts that lead back here.

This file uses the standard library only and no relative import: the
console script (_backplane_cli.py) runs it without importing the package.
"""

import os
import runpy
import shutil
import sys

__all__ = ["cli_path", "main"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _is_executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _packaged_cli():
    return os.path.join(_PACKAGE_DIR, "bin", "backplane")


def _development_build_dir():
    # Read by path, not imported: the console script runs this file without
    # importing the package (_backplane_cli.py).
    path = os.path.join(_PACKAGE_DIR, "_build_info.py")
    if not os.path.isfile(path):  # an installed package has no build folder
        return None
    return runpy.run_path(path).get("build_dir")


def _is_console_script(path):
    """True for a launcher that pip wrote for this package's console script:
    running it would come back to main()."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and (b"_backplane_cli" in head or b"backplane._cli" in head)


def _on_path():
    path = os.environ.get("PATH", os.defpath)
    for folder in path.split(os.pathsep):
        found = shutil.which("backplane", path=folder or os.curdir)
        if found and not _is_console_script(found):
            return found
    return None


def _not_found_message(search_path):
    build_dir = _development_build_dir()
    looked = [f"the package's own copy ({_packaged_cli()}, installed by `pip install`)"]
    if build_dir is not None:
        looked.append(f"the development build ({os.path.join(build_dir, 'bin', 'backplane')})")
    if search_path:
        looked.append("PATH")
    return ("cannot find the backplane command-line tool (the C++ executable); looked in: "
            + "; ".join(looked) + ". Build it with `make build` in a clone of the repository (or reinstall "
            "the package with `pip install .`, which bundles it), or set BACKPLANE_CLI to its path")


def cli_path(search_path=True):
    """The path of the ``backplane`` executable; FileNotFoundError, saying where
    it looked and how to get one, if there is none. ``search_path=False`` leaves
    PATH out (the console script is itself ``backplane`` on PATH)."""
    override = os.environ.get("BACKPLANE_CLI")
    if override:
        if not _is_executable(override):
            raise FileNotFoundError(f"BACKPLANE_CLI={override!r} is not an executable file")
        return override
    candidates = [_packaged_cli()]
    build_dir = _development_build_dir()
    if build_dir is not None:
        candidates.append(os.path.join(build_dir, "bin", "backplane"))
    for candidate in candidates:
        if _is_executable(candidate):
            return candidate
    found = _on_path() if search_path else None
    if found is None:
        raise FileNotFoundError(_not_found_message(search_path))
    return found


def main(argv=None, prog="backplane"):
    """Replaces this process with the ``backplane`` tool, passing ``argv``
    (default: ``sys.argv[1:]``). ``prog`` becomes the tool's argv[0], the name
    its usage lines show. Returns only by exiting with a message."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        path = cli_path(search_path=False)
    except FileNotFoundError as error:
        sys.stderr.write(f"{prog}: error: {error}\n")
        sys.exit(1)
    if _is_console_script(path):
        sys.stderr.write(f"{prog}: error: {path} is the Python console script, not the tool it runs "
                         "(BACKPLANE_CLI must name the C++ executable)\n")
        sys.exit(1)
    # Whatever Python buffered must reach the terminal before the process image goes.
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(path, [prog, *args])
    except OSError as error:
        sys.stderr.write(f"{prog}: error: cannot run {path}: {error.strerror}\n")
        sys.exit(1)
