"""Every behaviour of cases.py, on PyTorch and on Backplane, each in a fresh fork."""

import pytest

from cases import CASES
from conftest import BACKPLANE, TALLY, TORCH, check_known
from harness import differences, peer_cannot_answer, run_forked


@pytest.mark.parametrize("case_id", list(CASES))
def test_behaviour(case_id):
    fn = CASES[case_id]
    theirs = run_forked(fn, TORCH)
    if peer_cannot_answer(theirs):
        TALLY["not_compared"].append(case_id)
        pytest.skip(f"PyTorch needs a GPU driver to answer: {theirs!r}")
    ours = run_forked(fn, BACKPLANE)
    TALLY["behaviours"] += 1
    check_known(case_id, differences(theirs, ours))
