"""Shared test helpers: the package on sys.path, flag state restored after
every test, and clean subprocesses for env-var tests."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The package under test: python/ of this tree, or the folder of another
# build's extension (the sanitizer build of `make check`, scripts/check.sh).
PACKAGE_DIR = os.environ.get("BACKPLANE_PYTHON_DIR", str(ROOT / "python"))
sys.path.insert(0, PACKAGE_DIR)

import backplane  # noqa: E402
from backplane import _C  # noqa: E402

# Env vars that steer Backplane; subprocess tests start without any of them.
_STEERING_PREFIXES = ("BACKPLANE_", "TORCH_", "CUBLAS", "ATEN_", "DNNL_", "ONEDNN_")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STEERING_PREFIXES)}
    env["PYTHONPATH"] = PACKAGE_DIR
    env.update(extra)
    return env


def run_python(code, env=None, check=True):
    """Runs ``code`` in a fresh interpreter with a clean environment (plus ``env``)."""
    proc = subprocess.run([sys.executable, "-c", code], env=clean_env(**(env or {})), capture_output=True,
                          text=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"subprocess failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(autouse=True)
def restore_flags():
    """Every test leaves the flag table as it found it, a row never set included
    (Note [fp32 precision tree]: a default differs from the same value set)."""
    rows = [r for r in _C.flag_rows() if not r["env_only"]]
    saved = {r["path"]: (_C.flag_get(r["path"]), _C.flag_source(r["path"])) for r in rows}
    yield
    _C._set_flags_frozen(False)
    for path, (value, source) in saved.items():
        if source == "default":
            if _C.flag_source(path) != "default":
                _C.flag_reset(path)
        elif _C.flag_get(path) != value:
            _C.flag_set(path, value)


@pytest.fixture
def no_leaked_overrides():
    """python_native overrides that other tests registered (and left enabled) do not run in this test.

    Op tests use it (pytestmark); python_native's own tests must not, since
    they check the enabled state of what they register."""
    import contextlib
    from backplane.backends import python_native
    with contextlib.ExitStack() as stack:
        for name in python_native.all_dsls:
            stack.enter_context(getattr(python_native, name).disabled())
        yield


# What this machine's CPU can run: tests written on an AVX-512 machine must
# hold on an AVX2 one too (the kernels a CPU lacks are "not available").
def _backend_features(name):
    return next((r.features for r in backplane.backends.list_backends() if r.name == name), [])


def cpu_has(feature):
    """True when the CPU has ``feature`` ("avx2", "avx512f", "avx512_bf16", ...)."""
    if feature == "avx512_bf16":
        return _C.cpu_has_avx512_bf16()
    return feature in _backend_features("cpu")


def onednn_has_bf16():
    """True when this build's oneDNN computes with bf16 on this CPU (AVX512_CORE and up in 2.6)."""
    return "bf16" in _backend_features("onednn")


def first_available(op, prefix):
    """The first implementation of ``op`` in list order whose name starts with ``prefix`` and is available here."""
    return next(i.name for i in backplane.backends.list_implementations(op) if i.name.startswith(prefix) and i.available)
