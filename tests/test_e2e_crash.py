"""Crash tests: a run SIGKILLed at any node boundary of the happy path, then
``stepkit resume``, ends as an uninterrupted run does — same outcome and exit
code, same route through the graph, same plan files, NOTES.md, source files
and (normalised) handoff and output.

The kill comes from a real project-local plugin (``stepconf.py``, see
tests/crash_support.py) at ``stepkit_node_finished`` (the checkpoint says the
node finished) or ``stepkit_node_started`` (the checkpoint says it started:
it runs again on resume).  ``implement`` is the exception: a coder cut off
mid-edit is never re-run, and the run ends failed and says why.
"""

from __future__ import annotations

import pytest

from tests.crash_support import (
    KILLED,
    drive,
    files,
    install_killer,
    kill_env,
    normalise,
    route_of,
    was_killed,
)
from tests.e2e_support import make_project

HAPPY_PATH = ["resolve_step", "orient", "route_staleness", "implement", "route_coder_result",
              "verify_format_lint", "verify_build", "verify_tests", "edge_case_sweep", "route_sweep",
              "write_handoff", "check_handoff", "gate_user_review"]
RERUNNABLE = ["orient", "verify_tests", "write_handoff", "check_handoff"]


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
    assert (result.outcome, result.code) == (expected.outcome, expected.code), result.stderr + result.output
    assert route_of(project, result.data["run_id"]) == baseline["route"]
    assert files(project) == baseline["files"]
    assert normalise(result.output, project) == baseline["output"]
    assert project.coder_calls() == baseline["coder_calls"] == 1


@pytest.mark.parametrize("node", HAPPY_PATH)
def test_sigkill_after_a_node_finished_then_resume_matches_an_uninterrupted_run(tmp_path, baseline, node):
    project = crash_project(tmp_path)
    env = kill_env(project, node, "finished")
    result, codes = finished_run(project, env)
    assert was_killed(project) == f"{node} finished"
    assert codes.count(KILLED) == 1, codes
    assert_same_as_baseline(project, result, baseline)


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
