"""The ``backplane`` console script ([project.scripts] in pyproject.toml).

It runs backplane/_cli.py's main() (os.execv of the bundled C++ tool) without
importing the ``backplane`` package: the tool starts without paying for
NumPy, the extension and the op tables first, and a malformed BACKPLANE_*
variable is warned about once, by the tool, not a second time by the import.
(``python -m backplane`` does the same after Python imports the package, as
``-m`` always does.)
"""

import importlib.util
import os
import sys


def main():
    spec = importlib.util.find_spec("backplane")  # finds the package without running its __init__
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    paths = [os.path.join(folder, "_cli.py") for folder in locations]
    path = next((p for p in paths if os.path.isfile(p)), None)
    if path is None:
        sys.stderr.write("backplane: error: the backplane Python package is not installed here "
                         f"(no backplane/_cli.py importable by {sys.executable}); reinstall it with `pip install .`\n")
        sys.exit(1)
    cli_spec = importlib.util.spec_from_file_location("_backplane_cli_impl", path)
    cli = importlib.util.module_from_spec(cli_spec)
    cli_spec.loader.exec_module(cli)
    cli.main()


if __name__ == "__main__":
    main()
