"""Every known difference cites a line of docs/differences.md that exists."""

import pytest

from conftest import ROOT
from known_differences import KNOWN

DOC = ROOT / "docs" / "differences.md"


def cited_line(phrase):
    """The 1-based line of docs/differences.md holding ``phrase`` (exactly one must)."""
    lines = [i for i, line in enumerate(DOC.read_text().splitlines(), 1) if phrase in line]
    assert len(lines) == 1, f"{phrase!r} is on lines {lines} of docs/differences.md; it must be on exactly one"
    return lines[0]


@pytest.mark.parametrize("phrase", sorted(set(KNOWN.values())))
def test_citation_is_one_line_of_differences_md(phrase):
    cited_line(phrase)


def test_report_cited_lines(capsys):
    """Prints the table, case by case, with its docs/differences.md line (pytest -s shows it)."""
    with capsys.disabled():
        for case_id, phrase in sorted(KNOWN.items()):
            print(f"  known: {case_id}  ->  docs/differences.md:{cited_line(phrase)}")
