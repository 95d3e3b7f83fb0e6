"""The op framework from Python and the CLI: functions generated from each op's C++ declaration, explain
with the op's own typed arguments, and the template op of docs/adding_an_op.md loaded as a plugin and
used from Python, `backplane explain` and `backplane bench`."""

import inspect
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import backplane
from backplane import _cli, backends
from conftest import PACKAGE_DIR
import backplane.nn.functional as F

CLI = _cli.cli_path()
PLUGIN = pathlib.Path(CLI).resolve().parents[1] / "lib" / "libbackplane_op_axpy.so"


def rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_generated_functions_have_the_declared_signatures():
    assert str(inspect.signature(backplane.matmul)) == "(a, b)"
    assert str(inspect.signature(backplane.addmm)) == "(bias, a, b, *, beta=1.0, alpha=1.0)"
    assert str(inspect.signature(F.scaled_dot_product_attention)) == (
        "(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False)")
    assert F.scaled_dot_product_attention.__module__ == "backplane.nn.functional"
    assert "scaled_dot_product_attention" in F.__all__ and "matmul" in backplane.__all__
    assert "query (Tensor)" in F.scaled_dot_product_attention.__doc__


def test_explain_takes_the_ops_own_arguments_with_their_types():
    q = rand((1, 2, 16, 8))
    table = backends.explain("sdpa", q, q, q, is_causal=True, scale=0.25)
    assert table.problem.startswith("batch=2 L=16 S=16 E=8 Ev=8 f32 layout=0x4")  # kCausal
    assert backends.explain("scaled_dot_product_attention", q, q, q).op == "sdpa"
    # NumPy scalars are numbers: a float32 zero is a dropout probability.
    assert backends.explain("sdpa", q, q, q, dropout_p=np.float32(0)).chosen == "flash:cpu"
    assert backends.explain("sdpa", q, q, q, dropout_p=np.float32(0.5)).chosen == "math:any"


@pytest.mark.parametrize("kwargs, error, match", [
    ({"is_casual": True}, TypeError, r"unexpected keyword argument 'is_casual'; its signature is "
                                     r"scaled_dot_product_attention\(query, key, value, attn_mask=None"),
    ({"is_causal": 1}, TypeError, r"argument 'is_causal' must be bool, not int"),
    ({"scale": "big"}, TypeError, r"argument 'scale' must be float or None, not str"),
    ({"dropout_p": True}, TypeError, r"argument 'dropout_p' must be float, not bool"),
    ({"query": 1}, TypeError, r"multiple values for argument 'query'"),
])
def test_bad_arguments_name_the_signature(kwargs, error, match):
    q = rand((1, 1, 4, 8))
    with pytest.raises(error, match=match):
        backends.explain("sdpa", q, q, q, **kwargs)
    with pytest.raises(error, match=match):
        F.scaled_dot_product_attention(q, q, q, **kwargs)


def test_keyword_only_arguments_are_keyword_only():
    q = rand((1, 1, 4, 8))
    with pytest.raises(TypeError, match="takes at most 6 positional arguments but 7 were given"):
        F.scaled_dot_product_attention(q, q, q, None, 0.0, False, 0.5)
    a = rand((3, 3))
    with pytest.raises(TypeError, match="takes at most 3 positional arguments"):
        backplane.addmm(a, a, a, 0.5)


def test_explain_of_an_unknown_op_lists_the_known_ones():
    with pytest.raises(ValueError, match="explain: expected one of: matmul, addmm, linear, .*sdpa") as e:
        backends.explain("conv9d", rand((2, 2)))
    assert "rnn, rnn_weight_layout, rnn_pack_weights" in str(e.value)  # after matmul, in op_list.def order


def run_python(code, **env):
    # This process's environment (a sanitizer's preload among it), importing the package under test.
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": PACKAGE_DIR, **env})


def plugin_env():
    if not PLUGIN.exists():
        pytest.skip(f"the template op library was not built ({PLUGIN})")
    return {"BACKPLANE_OP_PLUGINS": str(PLUGIN)}


def test_the_template_op_from_python():
    code = """
import inspect, json, numpy as np, backplane
from backplane import backends
x = np.arange(6, dtype=np.float32).reshape(2, 3); y = np.ones((2, 3), np.float32)
out = backplane.axpy(x, y, alpha=2.0).numpy()
strided = backplane.axpy(x.T, y.T, alpha=0.5).numpy()
print(json.dumps({"sig": str(inspect.signature(backplane.axpy)), "out": out.tolist(), "strided": strided.tolist(),
                  "chosen": backends.explain("axpy", x, y).chosen, "strided_chosen": backends.explain("axpy", x.T, y.T).chosen,
                  "impls": [str(r) for r in backends.list_implementations("axpy")]}))
"""
    r = run_python(code, **plugin_env())
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert got["sig"] == "(x, y, *, alpha=1.0)"
    np.testing.assert_allclose(got["out"], 2 * x + 1)
    np.testing.assert_allclose(got["strided"], 0.5 * x.T + 1)
    assert got["chosen"] == "builtin:loop" and got["strided_chosen"] == "ref:any"
    assert got["impls"] == ["builtin:loop", "ref:any"]


def test_the_template_op_from_the_cli():
    env = {**os.environ, **plugin_env()}
    r = subprocess.run([CLI, "explain", "axpy", "--n", "32", "--json"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    table = json.loads(r.stdout)
    assert table["op"] == "axpy" and table["chosen"] == "builtin:loop" and table["problem"].startswith("n=32 f32")
    r = subprocess.run([CLI, "explain", "axpy", "--arg", "x=8x4:T", "--arg", "y=8x4:T", "--arg", "alpha=3"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "ref:any" in r.stdout and "builtin:loop          rejected" in r.stdout
    r = subprocess.run([CLI, "bench", "axpy", "--shape", "4096", "--dtype", "f32", "--repeat", "3", "--min-time",
                        "1", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert {row["implementation"] for row in report["rows"]} >= {"builtin:loop", "ref:any"}
    assert all(row["gflops"] > 0 for row in report["rows"])


def test_a_bad_plugin_path_warns_and_import_still_works():
    r = run_python("import backplane; print(backplane.matmul([[1.0]], [[2.0]]).numpy().tolist())",
                   BACKPLANE_OP_PLUGINS="/nonexistent/libnope.so")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[[2.0]]"
    assert "BACKPLANE_OP_PLUGINS" in r.stderr and "cannot load op library '/nonexistent/libnope.so'" in r.stderr


# ---------------------------------------------------------------- the generic CLI

def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)


def test_cli_explain_sets_any_argument_by_name():
    r = cli("explain", "sdpa", "--l", "16", "--s", "16", "--e", "8", "--heads", "2", "--arg", "is_causal=true",
            "--arg", "dropout_p=0.25", "--json")
    assert r.returncode == 0, r.stderr
    table = json.loads(r.stdout)
    assert table["chosen"] == "math:any"  # dropout stays with math
    assert "layout=0x14" in table["problem"]  # causal | dropout
    r = cli("explain", "matmul", "--arg", "a=16x8:T", "--arg", "b=8x4")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("matmul: batch=1 m=16 n=4 k=8 f32 layout=0x1")  # a transposed
    r = cli("explain", "linear", "--arg", "input=4x8", "--arg", "weight=3x8", "--arg", "bias=3")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("args, message", [
    (["explain", "sdpa", "--arg", "is_casual=true"], "expected one of the arguments of scaled_dot_product_attention("),
    (["explain", "sdpa", "--arg", "is_causal=maybe"], "argument 'is_causal': expected bool, got 'maybe'"),
    (["explain", "sdpa", "--arg", "nonsense"], "expected name=value"),
    (["explain", "addmm"], "missing required argument(s) 'bias', 'a', 'b'"),
    (["bench", "matmul", "--impl", "nosuch"], "--impl: expected an implementation or library of matmul"),
    (["bench", "matmul", "--shapes", "/tmp"], "--shapes: expected a shape file"),
    (["bench", "matmul", "--min-time", "nan", "--shape", "8 8 8"], "--min-time: expected a number of milliseconds"),
    (["bench", "matmul", "--shape", "9223372036854775807x2x2"], "whose product fits int64"),
    (["bench", "matmul", "--shape", "1099511627776x1099511627776x1"], "whose product fits int64"),
    (["bench", "matmul", "--shape", "8 8"], "bench matmul shape: expected 'm n k'"),
])
def test_cli_bad_input_is_a_message_and_exit_2(args, message):
    r = cli(*args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert message in r.stderr
    assert "Traceback" not in r.stderr and "terminate called" not in r.stderr
