"""A whole run on a scripted answers file of the previous format (its
handoff written before acceptance_criteria and notes_facts existed)."""

from __future__ import annotations

from tests.support.e2e import HANDOFF, make_project


def test_a_run_on_answers_of_the_previous_format_completes(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    previous = {k: v for k, v in HANDOFF.items() if k not in ("acceptance_criteria", "notes_facts")}
    result = project.run(
        "--step",
        "1",
        engine=project.script(write_handoff=previous),
        env=project.env(CODER_AUTOAPPROVE="1", STEP_AUTOAPPROVE="1"),
    )
    assert result.outcome == "PAUSED", result.output  # at the final approval: the step is verified
    question = result.data["pending"]["question"]
    assert "is implemented and verified" in question
    assert "- C1: `python check.py` passes. — no test cited" in question
