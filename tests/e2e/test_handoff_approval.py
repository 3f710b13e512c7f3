"""A handoff counts only once a person approved it: a failed, paused or
rejected run leaves no handoff in the plan repo that says ``result:
complete``, and ``status``, ``run``, ``ci`` and the dependency gate say the
same of the step.  Real CLI, real git project, scripted engine and command
coder (tests/support/e2e.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.ciworkflow import WORKFLOW_PATH
from tests.support.e2e import HANDOFF, make_project

# whole-step runs: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

#: a handoff that cites a test the tests gate never ran: its check fails twice
BAD_HANDOFF = {
    **HANDOFF,
    "acceptance_criteria": [
        {"criterion": "`python check.py` passes.", "tests": ["tests/test_calc.py::test_nope"]}
    ],
}


def complete_handoffs(project) -> list[str]:
    """Every file in the plan repo's handoffs/ that says ``result: complete``."""
    handoffs = project.plans / "handoffs"
    return [
        path.name
        for path in sorted(handoffs.rglob("*"))
        if path.is_file() and "result: complete" in path.read_text(errors="replace")
    ]


def status(project) -> dict:
    result = project.stepkit("status", "--project-dir", str(project.root))
    assert result.code == 0, result.stderr
    return result.data


def ready_in_ci(project) -> str:
    """What ``stepkit ci`` says (it writes the workflow, removed again)."""
    # this checkout's stepkit is outside the test's repository: name a source the jobs install
    result = project.stepkit(
        "ci", "--project-dir", str(project.root), "--stepkit-source", "stepkit", json_out=False
    )
    (project.root / WORKFLOW_PATH).unlink(missing_ok=True)
    return f"{result.code} {result.stdout}{result.stderr}"


def test_a_handoff_failing_its_check_twice_is_no_complete_handoff_anywhere(tmp_path):
    project = make_project(tmp_path)
    failed = project.run(engine=project.script(write_handoff=BAD_HANDOFF))
    assert failed.outcome == "STEP_FAILED", failed.stderr
    assert "handoff failed validation twice" in failed.output

    assert complete_handoffs(project) == []
    assert failed.data["handoff"] is None
    # the draft is kept in the run dir, not lost, and the output says where
    draft = Path(failed.data["handoff_draft"])
    assert draft.is_file() and f"Handoff draft (not approved): {draft}" in failed.output
    report = status(project)
    one, two = report["steps"][:2]
    assert (one["state"], one["handoff"], one["handoff_result"]) == ("failed", None, None)
    assert failed.data["run_id"] in one["state_why"]
    assert not two["deps_satisfied"] and report["next"] == 1
    assert ready_in_ci(project).startswith("0 Wrote") and "ready step (1)" in ready_in_ci(project)

    again = project.run()  # the failed step is the one to run, not "already complete"
    assert again.code == 5 and again.data["step"] == 1, again.stderr


def test_a_paused_run_is_paused_everywhere_and_only_the_approval_writes_the_handoff(tmp_path):
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.code == 5, paused.stderr
    assert complete_handoffs(project) == []
    draft = Path(paused.data["handoff_draft"]).relative_to(project.root)
    assert (
        f"Handoff: plans/handoffs/01-mul.md once you approve (draft: {draft})"
        in paused.data["pending"]["question"]
    )
    one, two = status(project)["steps"][:2]
    assert (one["state"], one["handoff"], one["handoff_result"]) == ("paused", None, None)
    assert f"stepkit resume {paused.data['run_id']}" in one["state_why"]
    assert not two["deps_satisfied"]
    assert ready_in_ci(project).startswith("2 ")

    again = project.run(json_out=False)
    assert again.code == 2
    refused = f"step 1 (Add mul) is paused: {one['state_why']}; it is not started again"
    assert again.stderr.splitlines() == [f"stepkit: error: {refused} unless you pass --rerun"]

    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE"
    assert complete_handoffs(project) == ["01-mul.md"]
    assert not Path(draft).exists()  # moved, not copied
    report = status(project)
    one, two = report["steps"][:2]
    assert (one["state"], one["handoff_result"]) == ("complete", "complete")
    assert two["deps_satisfied"] and report["next"] == 2


def test_a_rejected_run_leaves_the_step_to_do(tmp_path):
    project = make_project(tmp_path)
    assert project.run().code == 5
    rejected = project.resume("reject")
    assert rejected.outcome == "STEP_REJECTED"

    assert complete_handoffs(project) == []
    report = status(project)
    one, two = report["steps"][:2]
    assert one["state"] == "failed" and "STEP_REJECTED" in one["state_why"]
    assert not two["deps_satisfied"] and report["next"] == 1
    assert "ready step (1)" in ready_in_ci(project)
    assert project.run().data["step"] == 1
