"""render_handoff: frontmatter, the eight sections in order, Evidence from the gates."""

import re

import yaml

from stepkit.protocol.handoff.check import check_handoff_text, split_sections
from stepkit.protocol.handoff.render import (
    HANDOFF_SECTIONS,
    REVIEW_FAULT,
    SWEEP_FAULT,
    render_handoff,
)
from stepkit.records import GateResult

GATES = [
    GateResult(
        name="format",
        status="pass",
        command="ruff format .",
        exit_code=0,
        duration_s=0.25,
        evidence="2 files left unchanged",
        plugin="python",
    ),
    GateResult(
        name="lint",
        status="fail",
        command="ruff check .",
        exit_code=1,
        duration_s=1.5,
        evidence="app.py:3:1: F401 `os` imported but unused\n```not a fence end```",
        summary="1 error",
    ),
    GateResult(name="build", status="not_run", summary="no build command for this project"),
    GateResult(
        name="tests",
        status="timeout",
        command="pytest -q",
        exit_code=None,
        duration_s=1200,
        evidence="timed out after 1200 s",
    ),
]

PROSE = {
    "summary": "Added the parser.\n## Evidence\nEverything is fine.",
    "completed": ["parse ints", "parse floats"],
    "not_completed": "",
    "deviations": "Used `json` instead of a hand parser.",
    "downstream_plan_updates": None,
    "edge_cases_discovered": "handled: empty input",
    "notes_for_next_step": "Run `make gen` first.",
}


def render(**overrides):
    args = {
        "step": 3,
        "title": "Parser: ints & floats",
        "result": "partial",
        "prose": PROSE,
        "gates": GATES,
    }
    args.update(overrides)
    return render_handoff(**args)


def test_frontmatter_and_sections_in_order():
    text = render()
    front = yaml.safe_load(text.split("---\n")[1])
    assert front == {"step": 3, "title": "Parser: ints & floats", "result": "partial"}
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings == list(HANDOFF_SECTIONS)


def test_empty_sections_say_none_and_lists_become_bullets():
    sections, _ = split_sections(render())
    assert sections["not completed"].strip() == "None"
    assert sections["downstream plan updates"].strip() == "None"
    assert sections["completed"].strip() == "- parse ints\n- parse floats"


def test_prose_headings_cannot_open_a_section():
    sections, duplicates = split_sections(render())
    assert duplicates == []
    assert "### Evidence\nEverything is fine." in sections["summary"]
    assert "Everything is fine" not in sections["evidence"]


def test_evidence_comes_from_the_gates():
    evidence = split_sections(render())[0]["evidence"]
    assert "$ ruff format .\nexit code: 0 · duration: 0.2 s · chosen by: python" in evidence
    assert "$ ruff check .\nexit code: 1" in evidence
    assert "summary: 1 error" in evidence
    # the evidence holds a triple backtick, so its fence is longer
    assert (
        "````text\napp.py:3:1: F401 `os` imported but unused\n```not a fence end```\n````"
        in evidence
    )
    assert (
        "NOT RUN — this is NOT evidence that build passed (no build command for this project)."
        in evidence
    )
    assert "$ pytest -q\nexit code: none" in evidence


def test_faults_fix_loop_changed_files_and_harness_deviations():
    text = render(
        faults=[SWEEP_FAULT, "independent review did not run (reviewer exited 1)"],
        fix_history=["fix attempt 1: lint failed (1 error)"],
        fix_attempts=1,
        max_fix_attempts=2,
        changed_files=["app.py", "tests/test_app.py"],
        deviations=["the coder edited plans/steps/04-x.md; undone by the harness"],
    )
    sections, _ = split_sections(text)
    assert SWEEP_FAULT in sections["evidence"]
    assert f"{REVIEW_FAULT} (reviewer exited 1)" in sections["evidence"]
    assert sections["edge cases discovered"].strip().startswith(SWEEP_FAULT)
    assert (
        "Fix attempts used: 1 of 2\n- fix attempt 1: lint failed (1 error)" in sections["evidence"]
    )
    assert "- `tests/test_app.py`" in sections["evidence"]
    assert (
        sections["deviations"]
        .strip()
        .endswith(
            "- Recorded by stepkit: the coder edited plans/steps/04-x.md; undone by the harness"
        )
    )


def test_gate_dicts_are_accepted_and_the_render_passes_its_own_check():
    text = render(gates=[g.model_dump() for g in GATES])
    assert check_handoff_text(text, GATES) == []


def test_an_unclosed_fence_in_prose_cannot_swallow_later_sections():
    text = render(prose={**PROSE, "summary": "Output:\n````\n## Completed\nstill code"})
    sections, _ = split_sections(text)
    assert sections["summary"].strip().endswith("still code\n````")
    assert list(sections) == [name.lower() for name in HANDOFF_SECTIONS]
    assert check_handoff_text(text, GATES) == []
