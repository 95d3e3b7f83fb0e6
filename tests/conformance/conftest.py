"""The conformance suite: Backplane side by side with the real PyTorch.

Runs where PyTorch is importable (``make conformance`` makes .venv-peers
with PyTorch from PyPI and runs it there) and skips cleanly elsewhere, so
``make test`` and CI never need PyTorch. Every known difference is an entry
of known_differences.py citing the line of docs/differences.md that
explains it; any other difference fails.
"""

import pathlib
import sys
import types

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

torch = pytest.importorskip("torch", reason="PyTorch is not importable here (make conformance provides it)")

import backplane  # noqa: E402
import backplane.backends  # noqa: E402
import backplane.nn.attention  # noqa: E402
import backplane.nn.functional  # noqa: E402
import torch.backends  # noqa: E402
import torch.nn.attention  # noqa: E402
import torch.nn.functional  # noqa: E402

from known_differences import KNOWN  # noqa: E402


def _side(name, top, backends, attention, functional, tensor):
    return types.SimpleNamespace(name=name, top=top, backends=backends, attention=attention, F=functional,
                                 tensor=tensor)


TORCH = _side("torch", torch, torch.backends, torch.nn.attention, torch.nn.functional,
              lambda a: torch.from_numpy(np.ascontiguousarray(a)))
BACKPLANE = _side("backplane", backplane, backplane.backends, backplane.nn.attention, backplane.nn.functional,
                  lambda a: backplane.asarray(np.ascontiguousarray(a)))

# What was compared, for the summary line and the report.
TALLY = {"names": 0, "behaviours": 0, "known": set(), "not_compared": []}


def check_known(case_id, diffs):
    """Fails on an unexplained difference, and on a known one that no longer differs."""
    if case_id in KNOWN:
        if not diffs:
            pytest.fail(f"{case_id} is listed in known_differences.py but now conforms: remove the entry")
        TALLY["known"].add(case_id)
        return
    if diffs:
        pytest.fail(f"{case_id} differs from PyTorch {torch.__version__}:\n  " + "\n  ".join(diffs))


def pytest_terminal_summary(terminalreporter):
    if TALLY["names"] or TALLY["behaviours"]:
        terminalreporter.write_line(
            f"conformance vs PyTorch {torch.__version__}: {TALLY['names']} names and {TALLY['behaviours']} "
            f"behaviours compared; {len(TALLY['known'])} known differences (known_differences.py); "
            f"{len(TALLY['not_compared'])} behaviours not compared (PyTorch needs a GPU driver for them)")
        for case_id in TALLY["not_compared"]:
            terminalreporter.write_line(f"  not compared (PyTorch needs a GPU driver): {case_id}")
