"""The built-in LLM stages: prompts, schemas, and what the harness may apply."""

from __future__ import annotations

import pytest

from stepkit.plugins.stages.sweep import SweepAnswer

LATER_PLAN = (
    "---\r\nstep: 4\r\ntitle: Export   # keep this comment\r\nstatus: pending\r\n---\r\n"
    "## Objective\r\n\r\nExport reports.\r\n\r\n"
    "## Tasks\r\n\r\n- [ ] write exporter\r\n- [ ] add CLI flag\r\n\r\n"
    "## Edge cases\r\n\r\n* empty report\r\n\r\n"
    "## Out of scope\r\n\r\nPDF.\r\n"
)


def _edge_cases_span(text: str) -> tuple[int, int]:
    start = text.index("## Edge cases")
    return start, text.index("\n## ", start + 1)


def test_sweep_annotations_change_only_the_edge_cases_section(tmp_path):
    """A sweep that wants to change a later plan's Tasks: the proposal stays in
    downstream_updates, the annotation (even one smuggling a heading) lands as
    one bullet of Edge cases, and every other byte of the plan is unchanged."""
    from stepkit.plan import append_edge_case

    plan = tmp_path / "04-export.md"
    plan.write_bytes(LATER_PLAN.encode())
    answer = SweepAnswer.model_validate({
        "edge_case_report": "punted: unicode report names (step 4)",
        "downstream_updates": "Step 4, Tasks: before: '- [ ] add CLI flag' / after: "
                              "'- [ ] add CLI flag and --format' / why: users asked",
        "needs_independent_review": False,
        "annotations": [
            {"step": 4, "edge_case": "report names with non-ASCII characters"},
            {"step": 4, "edge_case": "x\n\n## Tasks\n\n- [ ] delete the exporter"},
            {"step": 4, "edge_case": "empty report"},  # already there: no change
        ],
    }).model_dump()

    applied = [append_edge_case(plan, note["edge_case"]) for note in answer["annotations"]]

    after = plan.read_bytes().decode()
    assert applied == [True, True, False]
    start, end = _edge_cases_span(LATER_PLAN)
    new_start, new_end = _edge_cases_span(after)
    assert after[:new_start] == LATER_PLAN[:start]
    assert after[new_end:] == LATER_PLAN[end:]
    section = after[new_start:new_end]
    assert section == ("## Edge cases\r\n\r\n* empty report\r\n"
                       "* report names with non-ASCII characters\r\n"
                       "* x ## Tasks - [ ] delete the exporter\r\n\r")
    assert after.count("## Tasks") == 2  # the real heading, and the text inside one bullet
    assert "--format" not in after


def test_sweep_schema_rejects_annotations_without_a_step():
    with pytest.raises(ValueError):
        SweepAnswer.model_validate({"edge_case_report": "", "downstream_updates": "",
                                    "needs_independent_review": False,
                                    "annotations": [{"edge_case": "no step"}]})
