"""A stop signal that arrives while the engine records a node's end is held
until the record is whole.  One that arrives as the run's end node is being
recorded leaves the run finished: before, the checkpoint said interrupted at
a finished end node with nowhere to go, and ``resume`` started the graph over
(in the step-runner: the plan's next step).  Real SIGTERMs, sent by the test
process to itself at the moment the engine writes."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from stepkit.api import RunInterrupted, resume_run, run_step
from stepkit.engine.runstore import RunDir
from stepkit.errors import UsageError
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.store import store_dir
from tests.support.graph_helpers import write_graph


def pm():
    return get_plugin_manager(builtins=["stepkit.plugins.ask"])


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    return write_graph(
        tmp_path,
        {
            "first": {
                "kind": "script",
                "call": "tests.support.graph_helpers:bump",
                "next": "end_success",
            }
        },
    )


SAVE = RunDir.save


def sigterm_during(monkeypatch, method: str, when) -> None:
    """SIGTERM this process while ``RunDir.<method>`` runs, the first time ``when(args)`` holds."""
    original = getattr(RunDir, method)
    sent = []

    def patched(self, *args, **kwargs):
        if not sent and when(*args):
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)  # handled at the next bytecode, inside the write
        return original(self, *args, **kwargs)

    monkeypatch.setattr(RunDir, method, patched)


def test_a_signal_while_the_end_is_recorded_leaves_the_run_finished(tmp_path, graph, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    sigterm_during(monkeypatch, "write_output", lambda text: True)
    try:
        result = run_step(project_dir=project, graph=graph, pm=pm())
    except RunInterrupted:
        stored = json.loads(next((store_dir(project) / "runs").glob("*/state.json")).read_text())
        pytest.fail(
            f"a finished run was saved as {stored['status']} at {stored['node']} ({stored['phase']}), "
            f"next {stored['next']}"
        )
    assert (result.outcome, result.exit_code, result.state["count"]) == ("STEP_COMPLETE", 0, 1)
    stored = json.loads((Path(result.run_dir) / "state.json").read_text())
    assert (stored["status"], stored["outcome"]) == ("finished", "STEP_COMPLETE")
    with pytest.raises(UsageError, match="already finished"):
        resume_run(result.run_id, project_dir=project, pm=pm())


def test_a_signal_while_a_node_is_recorded_resumes_after_that_node(tmp_path, graph, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    sigterm_during(monkeypatch, "save", lambda cp: cp.phase == "finished" and cp.node == "first")
    with pytest.raises(RunInterrupted) as info:
        run_step(project_dir=project, graph=graph, pm=pm())
    assert info.value.exit_code == 143
    (run_dir,) = (store_dir(project) / "runs").iterdir()
    stored = json.loads((run_dir / "state.json").read_text())
    assert (stored["status"], stored["node"], stored["phase"], stored["next"], stored["path"]) == (
        "interrupted",
        "first",
        "finished",
        "end_success",
        ["first"],
    )
    monkeypatch.setattr(
        RunDir, "save", SAVE
    )  # not undo(): that would drop the isolated state home too
    done = resume_run(run_dir.name, project_dir=project, pm=pm())
    assert (done.outcome, done.state["count"]) == ("STEP_COMPLETE", 1)
