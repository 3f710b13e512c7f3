"""Which checkpoints reach the disk before the run goes on (fsync): where the
process hands the run over (paused, ended, interrupted) and where a node
that resume may not run again starts.  The saves between nodes are renamed
into place unflushed: a kill never tears them, only a power loss can lose
them, and resume then runs again nodes that are safe to run again.

Each fsync of the real writes is recorded with what the file it flushes
holds at that moment (read back through ``/proc/self/fd``)."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

from stepkit.api import RunInterrupted, resume_run, run_step
from stepkit.pluginmanager import get_plugin_manager
from stepkit.records import Outcome, StageContext
from tests.support.graph_helpers import write_graph

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")


#: Let go of the node that stopped the run (it waits on it: the stop comes while it runs).
LET_GO = threading.Event()


def stop_myself(ctx: StageContext) -> Outcome:
    """A node during which the run is sent SIGTERM."""
    os.kill(os.getpid(), signal.SIGTERM)
    LET_GO.wait(20)
    return Outcome()


@pytest.fixture
def flushed(monkeypatch) -> list[tuple]:
    """(status, node, phase) of every checkpoint fsync'd, in order."""
    seen: list[tuple] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if path.name.startswith(".state.json."):
            cp = json.loads(path.read_text())
            seen.append((cp["status"], cp["node"], cp["phase"]))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def pm():
    return get_plugin_manager(builtins=["stepkit.plugins.ask"])


def test_the_coders_start_the_pause_and_the_end_are_flushed_and_nothing_between(tmp_path, flushed):
    graph = write_graph(
        tmp_path,
        {
            "first": {
                "kind": "script",
                "call": "tests.support.graph_helpers:bump",
                "next": "coder",
            },
            "coder": {
                "kind": "script",
                "call": "tests.support.graph_helpers:bump",
                "next": "later",
                "rerun_on_resume": False,
            },
            "later": {"kind": "script", "call": "tests.support.graph_helpers:bump", "next": "ask"},
            "ask": {
                "kind": "approval",
                "question": "Go?",
                "options": ["go", "stop"],
                "routes": {"go": "end_success", "stop": "end_failure"},
            },
        },
    )
    project = tmp_path / "project"
    project.mkdir()
    paused = run_step(project_dir=project, graph=graph, pm=pm())
    assert paused.outcome == "PAUSED"
    assert flushed == [("running", "coder", "started"), ("paused", "ask", "started")]

    done = resume_run(paused.run_id, project_dir=project, answer="go", pm=pm())
    assert (done.outcome, done.state["count"]) == ("STEP_COMPLETE", 3)
    assert flushed[2:] == [("finished", "end_success", "finished")]


def test_an_interrupted_run_is_flushed(tmp_path, flushed):
    graph = write_graph(
        tmp_path,
        {
            "first": {"kind": "script", "call": "tests.support.graph_helpers:bump", "next": "stop"},
            "stop": {
                "kind": "script",
                "call": "tests.unit.test_checkpoint_durable:stop_myself",
                "next": "end_success",
            },
        },
    )
    project = tmp_path / "project"
    project.mkdir()
    try:
        with pytest.raises(RunInterrupted):
            run_step(project_dir=project, graph=graph, pm=pm())
    finally:
        LET_GO.set()
    assert flushed == [("interrupted", "stop", "started")]
