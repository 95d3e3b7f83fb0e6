"""The package as a user gets it (issue 20): the wheel is built once, installed
into a fresh virtual environment, and what a user types there is run.

Slow (a wheel build, several minutes when nothing is cached), so it is not
part of `make test`: `make test-wheel` runs it, and CI runs that after
`make test`. The wheel is built with this interpreter's scikit-build-core and
nanobind (no build isolation, nothing downloaded for the build) in a build
folder that persists ($BACKPLANE_WHEEL_BUILD_DIR, default build-wheel/), so a
second run is incremental; it sits at the same depth as build/ and uses the
same compilers, so ccache reuses the objects of the development build. The
fresh environment gets the wheel's dependencies (NumPy) from the package
index pip is configured with, as a user's would.

Every command runs outside the repository, with a clean environment: what
answers is the installed package, never the development tree.
"""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEV_BUILD = pathlib.Path(os.environ.get("BACKPLANE_DEV_BUILD_DIR", ROOT / "build"))
WHEEL_BUILD = pathlib.Path(os.environ.get("BACKPLANE_WHEEL_BUILD_DIR", ROOT / "build-wheel"))
_STEERING_PREFIXES = ("BACKPLANE_", "TORCH_", "CUBLAS", "ATEN_", "DNNL_", "ONEDNN_")


def _run(cmd, timeout, **kwargs):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kwargs)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    return proc


def _project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(Backplane\s+VERSION\s+([0-9.]+)", text).group(1)


def _dev_compilers():
    """CC/CXX as the development build configured them (scikit-build-core would
    otherwise take Python's, gcc/g++, and ccache hashes the compiler's name)."""
    env = {}
    cache = DEV_BUILD / "CMakeCache.txt"
    if not cache.is_file():
        return env
    for var, key in (("CC", "CMAKE_C_COMPILER"), ("CXX", "CMAKE_CXX_COMPILER")):
        m = re.search(rf"^{key}:\w+=(.+)$", cache.read_text(), re.M)
        if m and var not in os.environ:
            env[var] = m.group(1).strip()
    return env


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, **_dev_compilers()}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    start = time.monotonic()
    _run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--no-build-isolation",
          "--disable-pip-version-check", "-w", out, "-C", f"build-dir={WHEEL_BUILD}"], timeout=3600, env=env)
    print(f"\nwheel built in {time.monotonic() - start:.0f} s (build folder {WHEEL_BUILD})")
    wheels = list(out.glob("backplane-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="session")
def venv(wheel, tmp_path_factory):
    path = tmp_path_factory.mktemp("venv") / "venv"
    _run([sys.executable, "-m", "venv", path], timeout=300)
    _run([path / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel],
         timeout=900, env=_user_env(path))
    return path


@pytest.fixture(scope="session")
def home(tmp_path_factory):
    """A working directory away from the repository (no python/ to import by accident)."""
    return tmp_path_factory.mktemp("home")


def _user_env(venv):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(_STEERING_PREFIXES) and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    dev_bin = str(pathlib.Path(sys.executable).parent)
    path = [p for p in env.get("PATH", os.defpath).split(os.pathsep) if p and p != dev_bin]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["VIRTUAL_ENV"] = str(venv)
    return env


def _user(venv, home, *cmd, check=True, timeout=120):
    """Runs ``cmd`` as a user of ``venv`` would type it."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                          cwd=home, env=_user_env(venv))
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def _python(venv, home, code, **kwargs):
    return _user(venv, home, venv / "bin" / "python", "-c", code, **kwargs)


@pytest.fixture(scope="session")
def installed(venv, home):
    """Facts about the installed package, from inside the venv."""
    code = ("import importlib.metadata as m, json, backplane, os;"
            "print(json.dumps({'file': backplane.__file__, 'version': backplane.__version__,"
            " 'metadata_version': m.version('backplane')}))")
    facts = json.loads(_python(venv, home, code).stdout)
    facts["package_dir"] = pathlib.Path(facts["file"]).parent
    facts["tool"] = facts["package_dir"] / "bin" / "backplane"
    return facts


def test_the_wheel_holds_the_package_its_tool_and_sound_metadata(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = z.read(info).decode()
        entry_points = z.read(info.replace("METADATA", "entry_points.txt")).decode()
    assert "backplane/bin/backplane" in names
    assert "backplane/__main__.py" in names and "backplane/__config__.py" in names
    assert "_backplane_cli.py" in names  # the console script's module, at the top level
    assert "backplane/bench/shapes/matmul/square.txt" in names  # `backplane bench --shapes square`
    assert any(re.fullmatch(r"backplane/_C\..*\.so", n) for n in names)
    # One copy of the library: a wheel cannot hold the symlinks of a versioned .so.
    assert [n for n in names if n.startswith("backplane/libbackplane.")] == ["backplane/libbackplane.so"]
    # Nothing of the development build rides along.
    assert not [n for n in names if "_build_info" in n or "__pycache__" in n]

    assert re.search(r"^\[console_scripts\]\s*\nbackplane = _backplane_cli:main$", entry_points, re.M)
    fields = [tuple(line.split(": ", 1)) for line in metadata.split("\n\n")[0].splitlines() if ": " in line]
    get = lambda key: [v for k, v in fields if k == key]  # noqa: E731
    assert get("Name") == ["backplane"]
    assert get("Version") == [_project_version()]
    assert get("Requires-Python") == [">=3.9"]
    requires = get("Requires-Dist")
    assert [r for r in requires if "extra ==" not in r] == ["numpy>=1.22"]
    assert set(get("Provides-Extra")) == {"bf16", "test", "peers"}
    for extra, wanted in (("test", {"pytest", "hypothesis", "ml_dtypes"}), ("peers", {"torch", "opt_einsum"})):
        named = {re.match(r"[\w.-]+", r).group(0) for r in requires if f"extra == \"{extra}\"" in r}
        assert named == wanted, (extra, named)
    classifiers = get("Classifier")
    assert "Programming Language :: Python :: 3" in classifiers and "Operating System :: POSIX :: Linux" in classifiers
    # The repository has no LICENSE, so the wheel claims none.
    assert not get("License") and not get("License-Expression")
    assert not [c for c in classifiers if c.startswith("License ::")]


def test_the_venv_answers_with_the_installed_package(venv, home, installed):
    assert pathlib.Path(installed["file"]).is_relative_to(venv), installed["file"]
    assert shutil.which("backplane", path=_user_env(venv)["PATH"]) == str(venv / "bin" / "backplane")
    assert installed["tool"].is_file() and os.access(installed["tool"], os.X_OK)


def test_versions_agree(venv, home, installed):
    cli = _user(venv, home, "backplane", "--version").stdout.strip()
    module = _user(venv, home, "python", "-m", "backplane", "--version").stdout.strip()
    info = json.loads(_user(venv, home, "backplane", "info", "--json").stdout)["version"]
    assert cli == module == info == installed["version"] == installed["metadata_version"] == _project_version()


def test_a_bad_env_value_is_warned_about_once(venv, home):
    """The console script does not import the package (which would warn too) before the tool runs."""
    proc = subprocess.run([str(venv / "bin" / "backplane"), "explain", "matmul"], capture_output=True, text=True,
                          timeout=120, cwd=home, env={**_user_env(venv), "BACKPLANE_CUDNN_BENCHMARK": "maybe"})
    assert proc.returncode == 0
    assert proc.stderr.count("BACKPLANE_CUDNN_BENCHMARK=maybe") == 1, proc.stderr
    assert "UserWarning" not in proc.stderr


def test_info_json(venv, home):
    report = json.loads(_user(venv, home, "backplane", "info", "--json").stdout)
    assert report["build"]["with"] and report["backends"] and report["flags"]
    cpu = next(b for b in report["backends"] if b["name"] == "cpu")
    assert cpu["built"] and cpu["available"]
    # The CUDA library, when built, is the one inside the package (found beside libbackplane).
    if report["build"]["with"].get("cuda"):
        cuda = next(b for b in report["backends"] if b["name"] == "cuda")
        assert "could not load" not in cuda["reason"], cuda["reason"]


def test_explain_matmul(venv, home):
    out = _user(venv, home, "backplane", "explain", "matmul").stdout
    assert out.startswith("matmul:")
    assert re.search(r"^\s+\S+\s+chosen\b", out, re.M), out
    assert re.search(r"^\s+ref:any\s", out, re.M), out


def test_bench_finds_its_named_shape_sets(venv, home):
    # "square" is found inside the package: the set refused is the second, missing one.
    proc = _user(venv, home, "backplane", "bench", "matmul", "--shapes", "square", "--shapes", home / "none",
                 check=False)
    assert proc.returncode == 2 and f"got '{home / 'none'}'" in proc.stderr, proc.stderr


def test_python_m_run_cpu(venv, home, installed):
    # The command: as in PyTorch, a program that is not a .py script needs
    # --no-python; the refusal (status, message) is the tool's own, unchanged.
    typed = _user(venv, home, "python", "-m", "backplane", "run-cpu", "--dry-run", "--json", "--", "true", check=False)
    direct = _user(venv, home, installed["tool"], "run-cpu", "--dry-run", "--json", "--", "true", check=False)
    assert typed.returncode == direct.returncode == 2
    assert "--no-python" in typed.stderr and typed.stderr == direct.stderr and typed.stdout == direct.stdout

    plan = json.loads(_user(venv, home, "python", "-m", "backplane", "run-cpu", "--dry-run", "--json",
                            "--no-python", "--", "true").stdout)
    assert plan["ninstances"] == 1
    assert os.path.basename(plan["instances"][0]["command"][-1]) == "true"


def test_exit_status_and_output_are_the_tools(venv, home, installed):
    for entry in (["backplane"], ["python", "-m", "backplane"]):
        for args in (["explain", "no_such_op"], ["bench", "matmul", "--dtype", "f99"], []):
            via = _user(venv, home, *entry, *args, check=False)
            direct = _user(venv, home, installed["tool"], *args, check=False)
            assert via.returncode == direct.returncode != 0, (entry, args, via.stderr)
            assert via.stdout == direct.stdout and via.stderr == direct.stderr, (entry, args)


def _exe(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


@pytest.mark.parametrize("entry", [["backplane"], ["python", "-m", "backplane"]])
def test_the_process_becomes_the_tool(venv, home, installed, entry):
    """exec, not a subprocess: the pid the shell started is the tool, so signals
    (Ctrl-C, kill, a batch system's TERM) reach it and its status is the shell's."""
    env = _user_env(venv)
    cmd = [shutil.which(entry[0], path=env["PATH"]), *entry[1:],
           "run-cpu", "--bind", "none", "--no-python", "--", "sleep", "60"]
    # SIGINT at its default, as in a terminal: a test run started in the background of a
    # non-interactive shell inherits SIGINT ignored, and a SIGINT landing before the tool
    # installs its forwarding handler would then be lost (and `sleep` would run on).
    proc = subprocess.Popen(cmd, cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while _exe(proc.pid) != str(installed["tool"]) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _exe(proc.pid) == str(installed["tool"]), (_exe(proc.pid), proc.poll())
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)  # the launcher forwards it to `sleep`, which ends, and so does the launcher
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
    assert proc.returncode != 0


def test_show_config(venv, home, installed):
    report = json.loads(_user(venv, home, "backplane", "info", "--json").stdout)
    text = _python(venv, home, "import backplane; r = backplane.show_config(); assert r is None").stdout
    same = _python(venv, home, "import backplane; print(backplane.__config__.show(), end='')").stdout
    assert text == same
    assert text.startswith(f"Backplane {installed['version']} built with:\n")
    assert f"compiler: {report['build']['compiler']}\n" in text
    assert f"build type: {report['build']['build_type']}\n" in text
    for name, built in report["build"]["with"].items():
        assert re.search(rf"^\s+{'✓' if built else '✗'} {name}\s", text, re.M), (name, built, text)
    assert f"command-line tool: {installed['tool']}\n" in text


def test_a_tool_that_is_not_there_is_a_clear_error(venv, home):
    def run_with(cli):
        return subprocess.run([str(venv / "bin" / "backplane"), "info"], capture_output=True, text=True,
                              timeout=60, cwd=home, env={**_user_env(venv), "BACKPLANE_CLI": str(cli)})
    missing = run_with(home / "no-such-backplane")
    assert missing.returncode == 1 and not missing.stdout
    assert missing.stderr.startswith("backplane: error: BACKPLANE_CLI=") and "not an executable file" in missing.stderr
    # The console script itself is no answer (it would run itself forever).
    loop = run_with(venv / "bin" / "backplane")
    assert loop.returncode == 1 and "is the Python console script" in loop.stderr
