"""Generated documentation stays current."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import gen_flags_doc  # noqa: E402


def test_flags_reference_is_current():
    committed = (ROOT / "docs" / "flags.md").read_text()
    assert committed == gen_flags_doc.render(), "docs/flags.md is stale: run `make docs`"


def test_flags_reference_lists_every_flag():
    from backplane import _C
    text = (ROOT / "docs" / "flags.md").read_text()
    for row in _C.flag_rows():
        assert f"`{row['path']}`" in text
