"""The final approval is bound to the tree the gates verified: when a file
changed, was added or was deleted after the tests gate passed, an approval
(at the final gate, or given with ``stepkit resume --answer approve``) never
prints STEP_COMPLETE: the run goes back to the gates, naming the changed
files in its ``recheck`` event and in ``fix_history``.

Real git projects, the real CLI, the scripted engine and a command coder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit.api import run_step
from stepkit.hookspecs import hookimpl
from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow


def paused_at_final_gate(project):
    result = project.run()
    assert result.code == 5, result.stderr + result.stdout
    assert result.data["pending"]["node"] == "gate_user_review"
    return result.data["run_id"]


def events(project, run_id, kind):
    lines = (store_dir(project.root) / "runs" / run_id / "events.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if event["event"] == kind]


def result_edges(project, run_id):
    return json.loads((store_dir(project.root) / "runs" / run_id / "state.json").read_text())[
        "edges"
    ]


def state(project, run_id):
    return json.loads((store_dir(project.root) / "runs" / run_id / "state.json").read_text())[
        "state"
    ]


def test_an_edit_while_paused_sends_the_approval_back_to_the_gates(project):
    run_id = paused_at_final_gate(project)
    tests_runs = len([e for e in events(project, run_id, "gate") if e["name"] == "tests"])
    with (project.root / "calc.py").open("a") as fh:
        fh.write("\n# edited while the run waited for its approval\n")

    again = project.resume("approve")
    assert again.code == 5 and again.outcome == "PAUSED", again.stderr + again.stdout
    assert "STEP_COMPLETE" not in again.stdout
    assert (
        again.data["pending"]["node"] == "gate_user_review"
    )  # asked again, about the tree now there
    assert project.plan_status(1) == "in-progress"
    (recheck,) = events(project, run_id, "recheck")
    assert recheck["to"] == "verify_format_lint" and recheck["updates"]["tree_changes"] == [
        "calc.py"
    ]
    assert ["gate_user_review", "verify_format_lint", "recheck"] in result_edges(project, run_id)
    assert (
        len([e for e in events(project, run_id, "gate") if e["name"] == "tests"]) == tests_runs + 1
    )
    assert any(
        "calc.py" in line and "gates run again" in line
        for line in state(project, run_id)["fix_history"]
    )

    done = project.resume("approve")  # the tree is the one the gates verified now
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout


def test_an_edit_that_breaks_the_step_while_paused_goes_to_the_fix_loop(project):
    run_id = paused_at_final_gate(project)
    (project.root / "calc.py").write_text(GOOD_MUL.replace("a * b", "a + b"))

    again = project.resume("approve")
    assert again.outcome != "STEP_COMPLETE", again.stdout
    assert project.coder_calls() == 2  # the tests failed: the coder fixed it in the fix loop
    assert again.code == 5 and again.data["pending"]["node"] == "gate_user_review"
    assert events(project, run_id, "recheck")[0]["updates"]["tree_changes"] == ["calc.py"]


def test_a_test_file_deleted_while_paused_is_never_approved(project):
    run_id = paused_at_final_gate(project)
    (project.root / "check.py").unlink()

    done = project.resume("approve")
    assert done.outcome != "STEP_COMPLETE" and done.code != 0, done.stdout
    assert not done.stdout.startswith("STEP_COMPLETE")
    assert project.plan_status(1) != "complete"
    assert events(project, run_id, "recheck")[0]["updates"]["tree_changes"] == ["check.py"]


#: A process outside stepkit's reach (stepkit stops what its commands leave
#: behind, so this one is started by the test): once the coder asked for it
#: (the ``request`` file) and the step's handoff draft is written in the run
#: store (the gates passed), it edits calc.py and leaves ``done``.
WRITER = r"""
import pathlib, sys, time
state, project = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
drafts = project / ".git" / "stepkit"
while not ((state / "request").exists() and any(drafts.rglob("handoff/01-mul.md"))):
    time.sleep(0.01)
with (project / "calc.py").open("a") as fh:
    fh.write("\nBACKDOOR = True\n")
(state / "done").write_text("ok")
"""


def test_a_change_by_a_process_the_coder_left_after_the_tests_gate_is_caught(project):
    project.coder_actions(
        {
            "write": {"calc.py": GOOD_MUL, str(project.state_dir / "request"): "edit calc.py"},
            "sentinel": "CODER_COMPLETE",
        }
    )
    (project.state_dir / "writer.py").write_text(WRITER)
    writer = subprocess.Popen(
        [
            sys.executable,
            str(project.state_dir / "writer.py"),
            str(project.state_dir),
            str(project.root),
        ]
    )
    try:
        run_id = paused_at_final_gate(project)
        assert writer.wait(timeout=60) == 0
    finally:
        writer.kill()
    checked = state(project, run_id)
    tests = next(g for g in checked["gates"] if g["name"] == "tests")
    assert "BACKDOOR" not in tests["evidence"]  # written after the tests gate ran

    again = project.resume("approve")
    assert again.outcome != "STEP_COMPLETE" and again.code == 5, again.stderr + again.stdout
    assert events(project, run_id, "recheck")[0]["updates"]["tree_changes"] == ["calc.py"]


class _EditThenApprove:
    """Answers the final gate itself: the first time after editing calc.py
    (as if someone typed while the question was open), then plainly."""

    def __init__(self, root: Path):
        self.root, self.asked = root, 0

    @hookimpl(tryfirst=True)
    def stepkit_ask(self, question, settings):
        if question.node != "gate_user_review":
            return None
        self.asked += 1
        if self.asked == 1:
            with (self.root / "calc.py").open("a") as fh:
                fh.write("\n# typed while the question was open\n")
        return "approve"


def test_a_change_made_before_a_live_approval_reruns_the_gates_first(project, monkeypatch):
    for name, value in project.env().items():
        monkeypatch.setenv(name, value)
    asker = _EditThenApprove(project.root)
    result = run_step(
        project_dir=project.root,
        engine=f"scripted:{project.script()}",
        coder=project.scripted_coder,
        observers=[asker],
    )
    assert result.outcome == "STEP_COMPLETE", result.output
    assert asker.asked == 2  # approved again after the gates passed on the edited tree
    (recheck,) = events(project, result.run_id, "recheck")
    assert recheck["when"] == "end" and recheck["updates"]["tree_changes"] == ["calc.py"]
    assert ["gate_user_review", "verify_format_lint", "recheck"] in result_edges(
        project, result.run_id
    )


def test_an_untouched_tree_is_approved_with_no_recheck(project):
    run_id = paused_at_final_gate(project)
    done = project.resume("approve")
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
    assert events(project, run_id, "recheck") == []
