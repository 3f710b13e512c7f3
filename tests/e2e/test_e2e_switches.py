"""The environment switches STEP_AUTOAPPROVE and STEP_SKIP_REVIEW are read
once, when a run starts: a run paused before the node that reads one routes
on resume as it would have without the pause, whatever the resuming shell
sets.  Real CLI processes, a real git project, command coder and reviewer."""

from __future__ import annotations

import pytest

from tests.support.e2e import ORIENT, SWEEP


def pause_at_gate_blocked(project, engine, env):
    """Start step 2 (its dependency has no handoff): the run pauses at
    gate_blocked, before orient, the sweep and the routers after them."""
    paused = project.run("--step", "2", engine=engine, env=env)
    assert paused.code == 5 and paused.data["pending"]["node"] == "gate_blocked", paused.stderr
    return paused


@pytest.mark.slow
def test_step_skip_review_set_at_start_still_skips_the_review_after_a_resume(project):
    engine = project.script(edge_case_sweep={**SWEEP, "needs_independent_review": True})
    pause_at_gate_blocked(project, engine, project.env(STEP_SKIP_REVIEW="1"))
    resumed = project.resume("yes", env=project.env())
    assert resumed.data["pending"]["node"] == "gate_user_review", resumed.stderr
    assert not (project.state_dir / "reviewer_calls").exists()


# the other direction of the test above, on the same path; CI's slow suite runs it
@pytest.mark.slow
def test_step_skip_review_set_only_at_resume_does_not_skip_the_review(project):
    engine = project.script(edge_case_sweep={**SWEEP, "needs_independent_review": True})
    pause_at_gate_blocked(project, engine, project.env())
    resumed = project.resume("yes", env=project.env(STEP_SKIP_REVIEW="1"))
    assert resumed.data["pending"]["node"] == "gate_user_review", resumed.stderr
    assert (project.state_dir / "reviewer_calls").read_text() == "1"


DEVIATION = {**ORIENT, "has_major_deviation": True, "deviation_summary": "calc.py was renamed"}


def test_step_autoapprove_set_at_start_still_skips_the_deviation_gate_after_a_resume(project):
    pause_at_gate_blocked(
        project, project.script(orient=DEVIATION), project.env(STEP_AUTOAPPROVE="1")
    )
    resumed = project.resume("yes", env=project.env())
    assert resumed.data["pending"]["node"] == "gate_user_review", resumed.stderr


# the other direction of the test above, on the same path; CI's slow suite runs it
@pytest.mark.slow
def test_step_autoapprove_set_only_at_resume_still_asks_at_the_deviation_gate(project):
    pause_at_gate_blocked(project, project.script(orient=DEVIATION), project.env())
    resumed = project.resume("yes", env=project.env(STEP_AUTOAPPROVE="1"))
    assert resumed.data["pending"]["node"] == "gate_deviation", resumed.stderr
