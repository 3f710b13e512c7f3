"""A step paused by the release before typed findings (checkpoint format 2:
its state holds a review's report as text only) resumes to its sentinel,
its state brought to format 3: the review's critical findings are read once
from the report's 🔴 lines, as routing read them then."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.engine.checkpoint import CHECKPOINT_FORMAT
from stepkit.protocol.state import StepState
from stepkit.workspace.seal import write_sealed
from tests.support.e2e import make_project

REPORT = "- 🔴 calc.py: mul ignores floats\n🟡 naming\nNo 🔴 findings otherwise."


def as_format_2(state_file: Path, report: object) -> None:
    """The checkpoint as format 2 wrote it: no typed findings in the state (sealed)."""
    data = json.loads(state_file.read_text())
    data["format_version"] = 2
    data["state"].pop("review_findings", None)
    data["state"]["review_report"] = report
    write_sealed(state_file, json.dumps(data))


@pytest.mark.slow
def test_a_step_paused_in_format_2_resumes_to_step_complete(tmp_path):
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.outcome == "PAUSED", paused.stderr
    state_file = Path(paused.data["run_dir"]) / "state.json"
    as_format_2(state_file, REPORT)

    done = project.resume("approve")

    assert done.outcome == "STEP_COMPLETE", done.stderr
    data = json.loads(state_file.read_text())
    assert data["format_version"] == CHECKPOINT_FORMAT == 6
    assert data["state"]["review_findings"] == [
        {"severity": "critical", "text": "calc.py: mul ignores floats", "file": "", "criterion": ""}
    ]


def test_a_format_2_state_gets_the_critical_findings_of_its_report_once():
    old = {"review_report": REPORT, "step": 1}
    upgraded = StepState.upgraded(old, 2)
    assert [f["text"] for f in upgraded["review_findings"]] == ["calc.py: mul ignores floats"]
    assert "review_findings" not in old  # the checkpoint read is not changed in place
    assert StepState.upgraded({"review_report": REPORT}, 3) == {"review_report": REPORT}
    kept = {"review_report": REPORT, "review_findings": []}
    assert StepState.upgraded(kept, 2) is kept


@pytest.mark.slow
def test_a_format_2_state_that_does_not_fit_is_refused_with_one_line(tmp_path):
    project = make_project(tmp_path)
    paused = project.run()
    state_file = Path(paused.data["run_dir"]) / "state.json"
    as_format_2(state_file, 5)  # a report that is no text

    refused = project.resume("approve")

    assert refused.code == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "its checkpoint does not fit the graph's state: 'review_report'" in refused.stderr
