"""Flags reach the human: tamper flags and scope deviations are in the final
approval question and in the STEP_COMPLETE / STEP_FAILED output, a tamper
flag forces the independent review (unless STEP_SKIP_REVIEW=1), and a coder
round that changed nothing is said plainly.  Real CLI, real git project,
command coder and reviewer scripts (tests/support/e2e.py)."""

from __future__ import annotations

import pytest

from tests.support.e2e import GOOD_MUL

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

TAMPER = "new # noqa in calc.py (+1)"
#: the deviation names the restored file (and where its copy is kept)
PLAN_EDIT = "plans/steps/02-div.md (modified; restored; the changed file kept at"
CHEATING = {
    "write": {"calc.py": GOOD_MUL + "# noqa\n", "plans/steps/02-div.md": "rewritten"},
    "sentinel": "CODER_COMPLETE",
}
NOTHING = {"say": "nothing left to do", "sentinel": "CODER_COMPLETE"}


def reviewer_calls(project) -> int:
    counter = project.state_dir / "reviewer_calls"
    return int(counter.read_text()) if counter.exists() else 0


def test_flags_are_in_the_question_and_the_output_and_force_the_review(project):
    project.coder_actions(CHEATING)
    paused = project.run()
    assert paused.code == 5, paused.stderr
    question = paused.data["pending"]["question"]
    assert TAMPER in question and PLAN_EDIT in question
    assert (
        reviewer_calls(project) == 1
    )  # one file changed, the sweep wanted no review: the flag did

    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE"
    assert TAMPER in done.output and PLAN_EDIT in done.output


def test_step_skip_review_still_skips_the_review_but_not_the_flags(project):
    project.coder_actions(CHEATING)
    paused = project.run(env=project.env(STEP_SKIP_REVIEW="1"))
    assert paused.code == 5, paused.stderr
    assert reviewer_calls(project) == 0
    assert TAMPER in paused.data["pending"]["question"]


def test_a_failed_step_names_its_flags(project):
    project.coder_actions(
        {"write": {"calc.py": GOOD_MUL + "# noqa\n# LINTFAIL\n"}, "sentinel": "CODER_COMPLETE"}
    )
    failed = project.run()
    assert failed.outcome == "STEP_FAILED", failed.stderr
    assert TAMPER in failed.output


def test_a_revision_round_that_changed_nothing_is_said_plainly(project):
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"}, NOTHING)
    first = project.run()
    assert "round 1 (the step): changed 1 file(s)" in first.data["pending"]["question"]
    assert project.resume("revise").data["pending"]["node"] == "get_revision"
    again = project.resume("add a docstring to mul")
    assert again.data["pending"]["node"] == "gate_user_review", again.stderr
    assert (
        'round 2 ("add a docstring to mul"): CHANGED NOTHING: no file outside the plan repo '
        "differs from after round 1"
    ) in again.data["pending"]["question"]


def test_a_first_round_that_changed_nothing_is_said_plainly(project):
    (project.root / "calc.py").write_text(GOOD_MUL)
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "mul already there")
    project.coder_actions(NOTHING)
    paused = project.run()
    assert paused.code == 5, paused.stderr
    assert (
        "round 1 (the step): CHANGED NOTHING: no file outside the plan repo differs from the "
        "step's start"
    ) in paused.data["pending"]["question"]
