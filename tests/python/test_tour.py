"""`make run`'s tour (scripts/tour.py) runs to the end and shows each op's knobs changing what runs."""

import subprocess
import sys

import backplane
from conftest import ROOT, clean_env


def test_the_tour_runs_and_every_knob_it_shows_changes_the_choice():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "tour.py")], env=clean_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    choice = {line.split("->")[0].strip(): line.split("->")[1].strip() for line in out.splitlines() if "->" in line}
    if backplane.backends.mkldnn.is_available():
        assert choice["conv2d depthwise 3x3, default"] == "onednn:conv"
    assert choice["conv2d under mkldnn.flags(enabled=False)"] != "onednn:conv"
    assert choice["linalg.cholesky under implementations('linalg', 'builtin')"] == "builtin:blocked"
    assert choice["LSTM under implementations('rnn', 'ref')"] == "ref:any"
    assert choice["MultiheadAttention in eval mode (the fast path)"] == "fastpath:cpu"
    assert "why not the fast path: ['training is enabled']" in out
    # unchanged by the bad values (its default: 10, or None in a build without cuDNN)
    assert f"cudnn.benchmark_limit is still {backplane.backends.cudnn.benchmark_limit}" in out
