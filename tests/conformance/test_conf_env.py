"""env_cases.py on both sides, each in a fresh interpreter with a clean environment."""

import ast
import os
import subprocess
import sys

import pytest

from conftest import ROOT, TALLY, check_known
from env_cases import ENV_CASES
from harness import Raised, differences, peer_cannot_answer

_STEERING = ("BACKPLANE_", "TORCH_", "CUBLAS", "ATEN_", "DNNL_", "ONEDNN_", "HIPBLAS", "ROCBLAS")

_PROGRAM = """
import warnings
warnings.simplefilter("always")
import {top} as top
import {top}.backends as B
try:
    value = ({expression})
    value = [getattr(v, "name", v) for v in value] if isinstance(value, (list, tuple)) else value
    print(repr(("ok", value)))
except Exception as exc:
    print(repr(("raise", [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"], str(exc))))
"""


def _run(top, env, expression):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(_STEERING)}
    clean["PYTHONPATH"] = str(ROOT / "python")
    clean.update(env)
    proc = subprocess.run([sys.executable, "-c", _PROGRAM.format(top=top, expression=expression)], env=clean,
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    if proc.returncode != 0 or not proc.stdout.strip():
        return Raised(("HarnessError",), proc.stderr[-2000:])
    kind, *rest = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    result = rest[0] if kind == "ok" else Raised(tuple(rest[0]), rest[1])
    warned = sorted(name for name in env if name in proc.stderr)
    return {"value": result, "warned about": warned}


@pytest.mark.parametrize("case_id", list(ENV_CASES))
def test_env(case_id):
    env, expression = ENV_CASES[case_id]
    theirs = _run("torch", env, expression)
    if peer_cannot_answer(theirs):
        TALLY["not_compared"].append(f"env:{case_id}")
        pytest.skip(f"PyTorch needs a GPU driver to answer: {theirs!r}")
    ours = _run("backplane", env, expression)
    TALLY["behaviours"] += 1
    check_known(f"env:{case_id}", differences(theirs, ours))
