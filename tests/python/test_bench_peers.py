"""python -m backplane.bench: backplane bench's rows with a Python peer timed on the same problems, ratios to
it, and clear errors for peers or plotting libraries that are not there."""

import importlib.util
import json
import subprocess
import sys

import pytest

from conftest import clean_env


def bench(*args):
    # The package under test (BACKPLANE_PYTHON_DIR under make check), not whatever python/ holds.
    return subprocess.run([sys.executable, "-m", "backplane.bench", *args], capture_output=True, text=True,
                          timeout=300, env=clean_env())


def test_numpy_peer_rows_and_ratios():
    r = bench("matmul", "--shape", "16 16 16", "--dtype", "f32", "--threads", "1", "--peer", "numpy",
              "--repeat", "1", "--min-time", "1", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    peer = [row for row in report["rows"] if row["implementation"] == "numpy (peer)"]
    assert len(peer) == 1 and peer[0]["median_ms"] > 0 and peer[0]["gflops"] > 0
    ours = [row for row in report["rows"] if row["library"] not in ("numpy",)]
    assert ours and all(row["vs_numpy"] > 0 for row in ours)


def test_fft_peer_gets_the_form_dims_by_name():
    # fftn's form gives input and dim, not s: dim goes by name (NumPy's axes), never into s's place.
    import numpy as np
    from backplane import bench as B
    call = B._peer_call("numpy", "fft", "1 8 16", "f32")
    out = call()
    assert out.shape == (8, 16)
    kwargs = B._C.op_form_args("fft", B._C.op_form_parse("fft", "1 8 16"), "f32", True)
    np.testing.assert_allclose(out, np.fft.fft2(kwargs["input"].numpy()), rtol=1e-4, atol=1e-4)
    r = bench("fft", "--shape", "1 1 64", "--threads", "1", "--peer", "numpy", "--repeat", "1", "--min-time", "1")
    assert r.returncode == 0, r.stderr
    assert "numpy (peer)" in r.stdout


def test_a_peer_without_the_op_is_a_note():
    r = bench("sdpa", "--shape", "1 1 16 16 8", "--threads", "1", "--peer", "numpy", "--repeat", "1",
              "--min-time", "1")
    assert r.returncode == 0, r.stderr
    assert "note: numpy has no counterpart of sdpa: not timed" in r.stdout


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is importable here")
def test_a_missing_peer_is_a_clear_error():
    r = bench("matmul", "--shape", "8 8 8", "--peer", "torch")
    assert r.returncode != 0
    assert "--peer torch: torch is not importable here" in r.stderr


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is not None, reason="matplotlib is importable here")
def test_plot_without_matplotlib_says_so(tmp_path):
    r = bench("matmul", "--shape", "8 8 8", "--repeat", "1", "--min-time", "1", "--plot", str(tmp_path / "x.png"))
    assert r.returncode != 0 and "--plot needs matplotlib" in r.stderr
