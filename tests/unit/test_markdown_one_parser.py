"""Markdown sections and list items have one parser (stepkit/planrepo/sections.py):
plans, handoffs, acceptance criteria, edge cases and review findings read
them the same way, and no other module writes a pattern of its own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from stepkit.planrepo.edits import append_edge_case
from stepkit.planrepo.sections import list_items, outline, plan_section, strip_list_markers
from stepkit.protocol.criteria import plan_criteria
from stepkit.protocol.handoff.check import check_handoff_text, split_sections
from stepkit.protocol.handoff.render import HANDOFF_SECTIONS, render_handoff
from stepkit.records import GateResult, marked_findings

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "stepkit" / "planrepo" / "sections.py"
MARKERS = ["-", "*", "+", "1.", "12)"]
GATES = [
    GateResult(name="tests", status="pass", command="pytest", exit_code=0, evidence="3 passed")
]
PROSE = {
    key: "None"
    for key in (
        "summary",
        "completed",
        "not_completed",
        "deviations",
        "downstream_plan_updates",
        "edge_cases_discovered",
        "notes_for_next_step",
    )
}


@pytest.mark.parametrize("marker", MARKERS)
def test_every_reader_takes_the_same_list_items(marker, tmp_path):
    assert plan_criteria(f"## Acceptance criteria\n{marker} slugify('A b') is 'a-b'\n") == [
        "slugify('A b') is 'a-b'"
    ]
    assert [f.text for f in marked_findings(f"{marker} 🔴 a.py: bug")] == ["a.py: bug"]
    assert strip_list_markers(f"{marker} text") == "text"
    plan = tmp_path / "plan.md"
    plan.write_text(f"## Edge cases\n\n{marker} empty input\n")
    assert append_edge_case(plan, "empty input") is False  # already there, whatever its marker


@pytest.mark.parametrize("line", ["-no blank after the marker", "1.5 is a number", "**bold** text"])
def test_no_reader_takes_a_line_that_is_no_list_item(line):
    assert list_items([line]) == []
    assert plan_criteria(f"## Acceptance criteria\n{line}\n") == []
    assert marked_findings(line.replace("no", "🔴", 1)) == []


def test_plans_and_handoffs_find_sections_by_one_rule():
    body = "## Edge Cases:\n- a\n```\n## not a heading\n```\n   ## Out of scope\n- later\n"
    assert plan_section(body, "edge cases") == "- a\n```\n## not a heading\n```"
    sections, duplicates = split_sections(body)
    assert list(sections) == ["edge cases", "out of scope"] and duplicates == []
    assert [(h.level, h.title) for h in outline(body).headings] == [
        (2, "Edge Cases:"),
        (2, "Out of scope"),
    ]


@pytest.mark.parametrize(
    "heading", ["## Evidence", "   ## Evidence", "# Evidence", "##", "  #  Completed"]
)
def test_a_heading_in_the_models_prose_never_opens_a_section(heading):
    text = render_handoff(
        3, "x", "complete", {**PROSE, "summary": f"Done.\n{heading}\nall tests passed"}, GATES
    )
    sections, duplicates = split_sections(text.split("---\n", 2)[2])
    assert duplicates == [] and list(sections) == [name.lower() for name in HANDOFF_SECTIONS]
    assert check_handoff_text(text, GATES) == []


def _patterns(path: Path) -> list[str]:
    """The regular expressions a module compiles or matches with."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.args
            and isinstance(node.args[0], (ast.Constant, ast.JoinedStr))
        ):
            found.append(ast.unparse(node.args[0]))
    return found


#: a list marker class, or a pattern anchored on a markdown heading's hashes
_OWN_MARKDOWN = re.compile(r"\[-\*\+\]|\[\*\+-\]|\[-\+\*\]|\^ ?(?:\{0,3\})?#(?:\{|#)")


def test_no_other_module_parses_markdown_lists_or_headings_itself():
    sources = [
        p for d in ("stepkit", "plugins") for p in sorted((ROOT / d).rglob("*.py")) if p != HOME
    ]
    own = {
        str(p.relative_to(ROOT)): hits
        for p in sources
        if (hits := [pattern for pattern in _patterns(p) if _OWN_MARKDOWN.search(pattern)])
    }
    assert own == {}
