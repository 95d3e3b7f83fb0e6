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


def test_every_cited_note_is_defined():
    """A comment that cites Note [X] points at a note that exists (DESIGN.md §6)."""
    import re
    cited, defined = {}, set()
    for folder in ("src", "include", "python", "tools", "tests", "scripts", "docs", "cmake"):
        for path in (ROOT / folder).rglob("*"):
            if (not path.is_file() or path.suffix in (".so", ".pyc") or "__pycache__" in path.parts
                    or path.name == "test_docs.py"):
                continue
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            for m in re.finditer(r"Note \[([^\]]+)\]", text):
                name = re.sub(r"\s*\n\s*(?://|#)?\s*", " ", m.group(1))  # a citation wrapped over lines
                cited.setdefault(name, str(path.relative_to(ROOT)))
            defined.update(re.findall(r"^\s*(?://|#)?\s*Note \[([^\]]+)\]\s*$", text, re.M))
    defined.update(re.findall(r"Note \[([^\]]+)\]\s*$", (ROOT / "CMakeLists.txt").read_text(), re.M))
    missing = {note: where for note, where in cited.items() if note not in defined}
    assert not missing, f"notes cited but never written: {missing}"
