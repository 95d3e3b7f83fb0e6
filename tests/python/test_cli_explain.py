"""`backplane explain matmul|sdpa`: the decision table on the command line, its
--json form, --device, and clear errors with exit status 2 for bad input."""

import json
import subprocess

import pytest

import backplane
from backplane import _cli

CLI = _cli.cli_path()


def run(*args):
    return subprocess.run([CLI, "explain", *args], capture_output=True, text=True, timeout=60)


def test_matmul_table_and_json():
    r = run("matmul", "--m", "8", "--n", "8", "--k", "8")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("matmul: batch=1 m=8 n=8 k=8 f32")
    assert "chosen" in r.stdout and "ref:any" in r.stdout
    table = json.loads(run("matmul", "--m", "8", "--n", "8", "--k", "8", "--json").stdout)
    assert table["op"] == "matmul" and table["problem"].startswith("batch=1 m=8 n=8 k=8 f32")
    chosen = [row["implementation"] for row in table["rows"] if row["status"] == "chosen"]
    assert chosen == [table["chosen"]]
    rejected = [row for row in table["rows"] if row["status"] == "rejected"]
    assert all(row["reasons"] for row in rejected)


def test_sdpa_table_lists_the_cpu_order():
    r = run("sdpa", "--batch", "1", "--heads", "2", "--l", "16", "--s", "16", "--e", "8")
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines()[1:] if line.startswith("  ") and ":" in line.split()[0]
             and not line.strip().startswith("note:")]
    cpu = [n for n in names if not n.startswith("cudnn:") and not n.endswith(":cuda")]
    assert cpu == ["flash:cpu", "efficient:cpu", "math:any"]
    assert "flash:cpu             chosen" in r.stdout


@pytest.mark.parametrize("op", ["matmul", "sdpa"])
def test_bad_device_is_a_clear_error(op):
    r = run(op, "--device", "gpu")
    assert r.returncode == 2
    assert "device: expected 'cpu', 'cpu:0', 'cuda' or 'cuda:<index>', got 'gpu'" in r.stderr


def test_cuda_device_explains_or_says_why_not():
    r = run("sdpa", "--device", "cuda", "--dtype", "f16", "--l", "64", "--s", "64")
    if backplane.cuda.is_available():
        assert r.returncode == 0, r.stderr
        assert "cudnn:sdpa" in r.stdout and "math:cuda" in r.stdout
    else:
        assert r.returncode == 2
        assert "not available" in r.stderr or "not built" in r.stderr
