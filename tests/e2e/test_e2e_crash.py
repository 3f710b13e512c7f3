"""Crash tests: a run SIGKILLed at any node boundary of the happy path, then
``stepkit resume``, ends as an uninterrupted run does — same outcome and exit
code, same route through the graph, same plan files, NOTES.md, source files
and (normalised) handoff and output.

The kill comes from a real project-local plugin (``stepconf.py``, see
tests/support/crash.py) at ``stepkit_node_finished`` (the checkpoint says the
node finished) or ``stepkit_node_started`` (the checkpoint says it started:
it runs again on resume).  ``implement`` is the exception: a coder cut off
mid-edit is never re-run, and the run ends failed and says why.
"""

from __future__ import annotations

import re

import pytest

from stepkit.workspace.store import store_dir
from tests.support.crash import (
    KILLED,
    assert_gate_stopped,
    assert_stopped,
    checkpoint,
    diff_files,
    drive,
    files,
    install_killer,
    interrupt_run,
    kill_env,
    normalise,
    route_of,
    slow_coder,
    waiting_test_cmd,
    was_killed,
)
from tests.support.e2e import PY, make_project

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

HAPPY_PATH = [
    "resolve_step",
    "orient",
    "route_staleness",
    "implement",
    "route_coder_result",
    "verify_format_lint",
    "verify_build",
    "verify_tests",
    "edge_case_sweep",
    "route_sweep",
    "write_handoff",
    "check_handoff",
    "gate_user_review",
]
RERUNNABLE = ["orient", "verify_tests", "write_handoff", "check_handoff", "end_success"]


def crash_project(tmp_path):
    project = make_project(tmp_path)
    install_killer(project)
    return project


def finished_run(project, env):
    """Run the step, resuming after each kill and approving at the final gate."""
    return drive(project, env, project.run(env=env))


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """One uninterrupted run (the same killer plugin installed, never firing)."""
    project = crash_project(tmp_path_factory.mktemp("baseline"))
    env = kill_env(project, None)
    result, codes = finished_run(project, env)
    assert codes == [5, 0] and result.outcome == "STEP_COMPLETE", result.stderr
    route = route_of(project, result.data["run_id"])
    assert route["path"] == [*HAPPY_PATH, "end_success"]
    return {
        "result": result,
        "output": normalise(result.output, project),
        "files": files(project),
        "route": route,
        "coder_calls": project.coder_calls(),
    }


def assert_same_as_baseline(project, result, baseline):
    expected = baseline["result"]
    assert (result.outcome, result.code) == (expected.outcome, expected.code), (
        result.stderr + result.output
    )
    assert route_of(project, result.data["run_id"]) == baseline["route"]
    changed = diff_files(files(project), baseline["files"])
    assert not changed, changed
    assert normalise(result.output, project) == baseline["output"]
    assert project.coder_calls() == baseline["coder_calls"] == 1


@pytest.mark.parametrize("node", HAPPY_PATH)
def test_sigkill_after_a_node_finished_then_resume_matches_an_uninterrupted_run(
    tmp_path, baseline, node
):
    project = crash_project(tmp_path)
    env = kill_env(project, node, "finished")
    result, codes = finished_run(project, env)
    assert was_killed(project) == f"{node} finished"
    assert codes.count(KILLED) == 1, codes
    assert_same_as_baseline(project, result, baseline)
    assert codes == ([5, KILLED, 0] if node == "gate_user_review" else [KILLED, 5, 0])


@pytest.mark.parametrize("node", RERUNNABLE)
def test_sigkill_as_a_rerunnable_node_started_reruns_it_on_resume(tmp_path, baseline, node):
    project = crash_project(tmp_path)
    env = kill_env(project, node, "started")
    result, codes = finished_run(project, env)
    assert was_killed(project) == f"{node} started"
    assert codes.count(KILLED) == 1, codes
    assert_same_as_baseline(project, result, baseline)


def test_sigkill_as_implement_started_ends_failed_and_never_reruns_the_coder(tmp_path):
    project = crash_project(tmp_path)
    env = kill_env(project, "implement", "started")
    killed = project.run(env=env)
    assert killed.code == KILLED and was_killed(project) == "implement started"
    assert project.plan_status(1) == "in-progress"

    result = project.resume(env=env)
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert result.output.splitlines()[0] == "STEP_FAILED"
    assert "implement was interrupted mid-edit" in result.output
    assert "never re-run" in result.output
    assert project.coder_calls() <= 1
    route = route_of(project, result.data["run_id"])
    assert route["path"] == ["resolve_step", "orient", "route_staleness", "end_failure"]
    assert route["edges"][-1] == ["implement", "end_failure", "interrupted"]
    assert project.plan_status(1) == "in-progress"  # never marked complete
    assert not project.handoff(1).is_file()


def test_ctrl_c_during_a_gate_saves_the_run_stops_the_gate_and_resume_finishes_it(
    tmp_path, baseline
):
    project = crash_project(tmp_path)
    waiting = waiting_test_cmd(project)
    env = project.env(TEST_CMD=waiting)
    code, out, err = interrupt_run(project, "started", env=env)
    assert code == 130, err
    (run_id,) = [p.name for p in (store_dir(project.root) / "runs").iterdir()]
    assert (
        # run in the project: no --project-dir
        f"interrupted; run {run_id} saved. Resume with: stepkit resume {run_id}\n" in err
    )
    assert "Traceback" not in err and out == ""
    cut = checkpoint(project, run_id)
    assert (cut["status"], cut["node"], cut["phase"]) == ("interrupted", "verify_tests", "started")
    # the gate's command runs in its own session, out of the terminal's reach: stepkit stops it
    assert_gate_stopped(project)

    (project.state_dir / "go").touch()
    result, codes = drive(project, env, project.resume(env=env))
    assert codes == [5, 0]
    assert result.data["run_id"] == run_id

    def as_baseline(text):  # the same run, with the baseline's test command
        shown = waiting.replace(str(project.state_dir), "<STATE>")
        unquoted = re.sub(r"'(<STATE>[^' ]*)'", r"\1", shown)  # as normalise() leaves it
        for spelled in (waiting, shown, unquoted):
            text = text.replace(spelled, f"{PY} check.py")
        return text

    expected = baseline["result"]
    assert (result.outcome, result.code) == (expected.outcome, expected.code)
    assert route_of(project, run_id) == baseline["route"]
    changed = diff_files({k: as_baseline(v) for k, v in files(project).items()}, baseline["files"])
    assert not changed, changed
    assert normalise(as_baseline(result.output), project) == baseline["output"]


def test_ctrl_c_while_the_coder_edits_stops_it_and_resume_fails_honestly(tmp_path):
    project = crash_project(tmp_path)
    code, _, err = interrupt_run(project, "coder_started", coder=slow_coder(project))
    assert code == 130, err
    assert_stopped(
        project.state_dir / "coder_started", "the coder", project.state_dir / "slow_coder.py"
    )

    result = project.resume()
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "implement was interrupted mid-edit" in result.output
    assert route_of(project, result.data["run_id"])["edges"][-1] == [
        "implement",
        "end_failure",
        "interrupted",
    ]
    assert (
        project.root / "calc.py"
    ).read_text() == "def add(a, b):\n    return a +"  # left for the user to inspect
