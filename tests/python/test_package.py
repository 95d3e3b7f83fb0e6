"""The package's own faces (issue 20), in the development layout: the
``backplane`` console script's target and ``python -m backplane`` (both exec
the C++ tool), the one version, show_config(), and what pyproject.toml
declares. tests/wheel (`make test-wheel`) runs the same from a built wheel.
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import backplane
from backplane import _C, _cli

from conftest import ROOT, clean_env, run_python

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


def _python_m(*args, env=None):
    return subprocess.run([sys.executable, "-m", "backplane", *args], capture_output=True, text=True, timeout=120,
                          env=clean_env(**(env or {})))


def _cmake_version():
    return re.search(r"project\(Backplane\s+VERSION\s+([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)


# ---------------------------------------------------------------- one version

def test_version_is_cmakes():
    assert backplane.__version__ == _C.__version__ == _cmake_version()
    assert _python_m("--version").stdout.strip() == backplane.__version__
    assert json.loads(_python_m("info", "--json").stdout)["version"] == backplane.__version__


@pytest.mark.skipif(tomllib is None, reason="tomllib is Python 3.11+")
def test_pyproject_takes_the_version_from_cmake():
    """The wheel's version is read from CMakeLists.txt, never written twice."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    provider = meta["tool"]["scikit-build"]["metadata"]["version"]
    assert provider["provider"] == "scikit_build_core.metadata.regex" and provider["input"] == "CMakeLists.txt"
    m = re.search(provider["regex"], (ROOT / provider["input"]).read_text())
    assert m and m.group("value") == backplane.__version__


@pytest.mark.skipif(tomllib is None, reason="tomllib is Python 3.11+")
def test_declared_dependencies_are_what_import_needs():
    """Every third-party module that ``import backplane`` loads is a declared
    dependency, or an optional one (imported only when present) named in an extra."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name = lambda req: re.match(r"[A-Za-z0-9_.-]+", req).group(0).replace("-", "_").lower()  # noqa: E731
    required = {name(r) for r in meta["dependencies"]}
    optional = {name(r) for reqs in meta["optional-dependencies"].values() for r in reqs}
    code = ("import sys; before = set(sys.modules); import backplane; "
            "print(' '.join(sorted({m.split('.')[0] for m in set(sys.modules) - before})))")
    loaded = set(run_python(code).stdout.split())
    third_party = {m for m in loaded - set(sys.stdlib_module_names) - {"backplane"} if not m.startswith("_")}
    assert third_party - required <= optional, third_party - required - optional
    assert required <= third_party, "a dependency that import does not need: " + str(required - third_party)
    # ml_dtypes is optional: the package imports without it.
    assert "ml_dtypes" not in required
    run_python("import sys; sys.modules['ml_dtypes'] = None; import backplane; "
               "import numpy as np; backplane.asarray(np.ones(3, np.float32))")


@pytest.mark.skipif(tomllib is None, reason="tomllib is Python 3.11+")
def test_console_script_and_extras_are_declared():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["scripts"] == {"backplane": "_backplane_cli:main"}
    module, func = meta["scripts"]["backplane"].split(":")
    assert callable(getattr(__import__(module, fromlist=[func]), func))
    extras = meta["optional-dependencies"]
    assert {"pytest", "hypothesis", "ml_dtypes"} <= set(extras["test"])
    peers = {re.match(r"[\w.-]+", r).group(0): r for r in extras["peers"]}
    assert set(peers) == {"torch", "opt_einsum"}
    # The same PyTorch as the peer environment of `make conformance`.
    spec = re.search(r'TORCH_SPEC="\$\{TORCH_SPEC:-([^}]*)\}"', (ROOT / "scripts" / "setup-peers.sh").read_text())
    assert spec and peers["torch"] == spec.group(1)
    assert "license" not in meta and not (ROOT / "LICENSE").exists()  # none to declare yet


# ---------------------------------------------------------------- python -m backplane

def test_python_m_backplane_is_the_tool():
    # This package's build (make check runs the tests on its sanitizer build's package).
    build_info = (pathlib.Path(backplane.__file__).parent / "_build_info.py").read_text()
    tool = re.search(r"build_dir = r'(.*)'", build_info).group(1) + "/bin/backplane"
    for args in (["explain", "matmul"], ["explain", "no_such_op"], []):
        via = _python_m(*args)
        direct = subprocess.run([tool, *args], capture_output=True, text=True, timeout=120, env=clean_env())
        assert via.returncode == direct.returncode, args
        assert via.stdout == direct.stdout, args
        # The usage lines name what the user typed.
        assert via.stderr == direct.stderr.replace(tool, "python -m backplane"), args
    assert "Usage: python -m backplane" in _python_m("--help").stdout


# ---------------------------------------------------------------- _cli.main

class _Exec(Exception):
    pass


@pytest.fixture
def exec_calls(monkeypatch):
    calls = []

    def fake_execv(path, argv):
        calls.append((path, argv))
        raise _Exec()
    monkeypatch.setattr(os, "execv", fake_execv)
    return calls


def test_main_execs_the_tool_with_the_same_arguments(exec_calls, monkeypatch):
    monkeypatch.delenv("BACKPLANE_CLI", raising=False)
    monkeypatch.setattr(sys, "argv", ["/somewhere/bin/backplane", "explain", "matmul", "--m", "8", "--", "x y"])
    with pytest.raises(_Exec):
        _cli.main()
    assert exec_calls == [(_cli.cli_path(), ["backplane", "explain", "matmul", "--m", "8", "--", "x y"])]
    with pytest.raises(_Exec):
        _cli.main(["info"], prog="python -m backplane")
    assert exec_calls[-1][1] == ["python -m backplane", "info"]


def _nowhere(monkeypatch, tmp_path):
    """No override, no copy in the package, no development build."""
    monkeypatch.delenv("BACKPLANE_CLI", raising=False)
    monkeypatch.setattr(_cli, "_PACKAGE_DIR", str(tmp_path / "site-packages" / "backplane"))
    monkeypatch.setattr(_cli, "_development_build_dir", lambda: str(tmp_path / "build"))


def test_main_without_the_tool_says_what_is_missing(exec_calls, monkeypatch, tmp_path, capsys):
    _nowhere(monkeypatch, tmp_path)
    # A real backplane on PATH is not used: the console script is itself `backplane` on PATH.
    fake = tmp_path / "bin" / "backplane"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    with pytest.raises(SystemExit) as exit_info:
        _cli.main(["info"])
    assert exit_info.value.code == 1 and not exec_calls
    err = capsys.readouterr().err
    assert err.startswith("backplane: error: cannot find the backplane command-line tool")
    assert str(tmp_path / "site-packages" / "backplane" / "bin" / "backplane") in err
    assert str(tmp_path / "build" / "bin" / "backplane") in err
    assert "make build" in err and "pip install ." in err and "BACKPLANE_CLI" in err


def test_main_with_a_bad_override(exec_calls, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("BACKPLANE_CLI", str(tmp_path / "nothing"))
    with pytest.raises(SystemExit) as exit_info:
        _cli.main(["info"])
    assert exit_info.value.code == 1 and not exec_calls
    assert "not an executable file" in capsys.readouterr().err


def _console_script(path):
    """What pip writes for [project.scripts] backplane = _backplane_cli:main."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n"
                    "from _backplane_cli import main\nif __name__ == '__main__':\n"
                    "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n    sys.exit(main())\n")
    path.chmod(0o755)
    return path


def test_cli_path_skips_the_console_script_on_path(monkeypatch, tmp_path):
    _nowhere(monkeypatch, tmp_path)
    script = _console_script(tmp_path / "venv" / "bin" / "backplane")
    real = tmp_path / "usr" / "bin" / "backplane"
    real.parent.mkdir(parents=True)
    real.write_bytes(b"\x7fELF not really")
    real.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(script.parent), str(real.parent)]))
    assert _cli.cli_path() == str(real)
    monkeypatch.setenv("PATH", str(script.parent))
    with pytest.raises(FileNotFoundError, match="looked in: .*PATH"):
        _cli.cli_path()


def test_main_refuses_to_run_itself(exec_calls, monkeypatch, tmp_path, capsys):
    script = _console_script(tmp_path / "bin" / "backplane")
    monkeypatch.setenv("BACKPLANE_CLI", str(script))
    with pytest.raises(SystemExit) as exit_info:
        _cli.main(["info"])
    assert exit_info.value.code == 1 and not exec_calls
    assert "is the Python console script" in capsys.readouterr().err


def test_console_script_does_not_import_the_package():
    """The tool starts without NumPy and the extension being loaded first, and
    a bad BACKPLANE_* value is warned about once (by the tool), not also by the import."""
    code = ("import os, sys\n"
            "def execv(path, argv):\n"
            "    print(sorted(m for m in ('backplane', 'backplane._C', 'numpy') if m in sys.modules), path, argv)\n"
            "    sys.exit(0)\n"
            "os.execv = execv\n"
            "import _backplane_cli\n"
            "sys.argv = ['/venv/bin/backplane', 'info', '--json']\n"
            "_backplane_cli.main()\n")
    out = run_python(code, env={"BACKPLANE_CUDNN_BENCHMARK": "maybe"})
    assert out.stdout.strip() == f"[] {_cli.cli_path()} ['backplane', 'info', '--json']"
    assert out.stderr == ""


def test_console_script_runs_the_tool(tmp_path):
    """The script pip writes, run for real: it becomes the tool (status and output)."""
    script = _console_script(tmp_path / "bin" / "backplane")
    env = clean_env(PATH=os.pathsep.join([str(script.parent), os.environ.get("PATH", os.defpath)]))
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == backplane.__version__
    proc = subprocess.run([str(script), "explain", "matmul", "--dtype", "f99"], capture_output=True, text=True,
                          timeout=120, env=env)
    direct = subprocess.run([_cli.cli_path(), "explain", "matmul", "--dtype", "f99"], capture_output=True,
                            text=True, timeout=120, env=env)
    assert proc.returncode == direct.returncode != 0 and proc.stderr == direct.stderr and "f99" in proc.stderr


# ---------------------------------------------------------------- show_config

def test_show_config_is_the_build_summary(capsys):
    assert backplane.show_config() is None
    text = capsys.readouterr().out
    assert text == backplane.__config__.show()
    report = json.loads(_python_m("info", "--json").stdout)
    assert text.startswith(f"Backplane {backplane.__version__} built with:\n")
    assert f"  - compiler: {report['build']['compiler']}\n" in text
    assert f"  - build type: {report['build']['build_type']}\n" in text
    toolkit = report["build"]["cuda_toolkit"]
    assert f"  - CUDA toolkit: {toolkit or 'none (built without CUDA)'}\n" in text
    for name, built in report["build"]["with"].items():
        line = re.search(rf"^      ([✓✗]) {name}\s+(.*)$", text, re.M)
        assert line, name
        assert line.group(1) == ("✓" if built else "✗") and line.group(2) == _C.built_why[name]
    assert f"  - command-line tool: {_cli.cli_path()}\n" in text
    import numpy
    assert f"  - NumPy {numpy.__version__}\n" in text


def test_show_config_without_ml_dtypes_or_the_tool():
    code = ("import sys; sys.modules['ml_dtypes'] = None; import backplane, backplane._cli as c; "
            "c.cli_path = lambda: (_ for _ in ()).throw(FileNotFoundError()); backplane.show_config()")
    out = run_python(code).stdout
    assert "ml_dtypes not installed" in out and "backplane[bf16]" in out
    assert "command-line tool: not found (build it with `make build`" in out
