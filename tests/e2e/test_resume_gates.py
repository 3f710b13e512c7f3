"""Pause → resume at every approval and input node of the step-runner graph
(gate_blocked, gate_deviation, gate_user_review, get_revision), pre-answers,
interrupted nodes and the resume command's errors.

The step-runner's script nodes and renderers are replaced by
``graph_helpers.scripted`` / ``render_plain`` and its stages by a stub stage
runner, so these tests drive the graph itself, not the gates or a model.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import create_model

import stepkit.protocol.graphs
from stepkit.api import RunInterrupted, RunResult, resume_run, run_step
from stepkit.cli import main
from stepkit.engine.runstore import RunStore
from stepkit.errors import UsageError
from stepkit.graph.nodes import EndNode, ScriptNode, WorkNode
from stepkit.pluginmanager import get_plugin_manager
from stepkit.protocol.graphs import load_protocol_graph
from stepkit.protocol.state import StepState
from stepkit.workspace.store import store_dir
from tests.support.e2e import sh
from tests.support.graph_helpers import STUB_OUTPUTS, render_plain, scripted, stage_runner

HAPPY = {
    "resolve_step": "deps satisfied",
    "route_staleness": "else",
    "route_coder_result": "CODER_COMPLETE",
    "verify_format_lint": "pass",
    "verify_build": "pass",
    "verify_tests": "pass",
    "route_sweep": "else",
    "check_handoff": "schema valid",
}
UPDATES = {
    "resolve_step": {"step": 3, "title": "Add slugify", "unsatisfied": ["step 2: no handoff"]},
    "orient": {
        "has_major_deviation": True,
        "deviation_summary": "the API moved",
        "staleness_report": "stale",
    },
    "write_handoff": {"step_summary": "slugify added"},
}


@pytest.fixture(autouse=True)
def stub_steprunner(monkeypatch):
    """The step-runner graph with its script nodes and renderers stubbed; its
    script and stage nodes, and its state model, also declare the keys the stubs set."""
    load = stepkit.protocol.graphs.load_protocol_graph
    stubbed_state = create_model(
        "StubbedStepState", __base__=StepState, **{key: (Any, None) for key in STUB_OUTPUTS}
    )

    def load_declaring_stub_outputs(path=None):
        graph = load(path)
        for node in graph.nodes.values():
            if isinstance(node, WorkNode):
                node.outputs = [*node.outputs, *STUB_OUTPUTS]
        graph.state_model = stubbed_state
        return graph

    monkeypatch.setattr(stepkit.protocol.graphs, "load_protocol_graph", load_declaring_stub_outputs)
    for node in load_protocol_graph().nodes.values():
        if isinstance(node, ScriptNode):
            module, name = node.call.split(":")
            monkeypatch.setattr(
                importlib.import_module(module), name, lambda ctx: scripted(ctx, PLAYED)
            )
        if isinstance(node, EndNode) and node.render:
            module, name = node.render.split(":")
            monkeypatch.setattr(importlib.import_module(module), name, render_plain)


def pm():
    return get_plugin_manager(builtins=["stepkit.plugins.ask"])


#: what the stubbed nodes do in this test (the built-in graph takes no test keys through ``sets``)
PLAYED: dict[str, Any] = {}


def played_stage(name: str, ctx: Any) -> Any:
    return stage_runner(name, ctx, PLAYED)


def start(project_dir: Path, answers: dict | None = None, **script) -> RunResult:
    PLAYED.clear()
    PLAYED.update(script={**HAPPY, **script}, stub_updates=UPDATES)
    return run_step(project_dir=project_dir, answers=answers, pm=pm(), stage_runner=played_stage)


def resume(project_dir: Path, run_id: str | None, answer: str | None = None) -> RunResult:
    return resume_run(
        run_id, answer=answer, project_dir=project_dir, pm=pm(), stage_runner=played_stage
    )


def checkpoint(result: RunResult) -> dict:
    return json.loads((Path(result.run_dir) / "state.json").read_text())


def assert_paused_at(result: RunResult, node: str) -> None:
    assert (result.outcome, result.exit_code) == ("PAUSED", 5)
    assert result.pending["node"] == node
    cp = checkpoint(result)
    assert cp["status"] == "paused" and cp["node"] == node and cp["phase"] == "started"


def test_gate_blocked_pauses_then_yes_runs_the_step_to_the_final_gate(project_dir):
    first = start(project_dir, resolve_step="deps unsatisfied")
    assert_paused_at(first, "gate_blocked")
    assert (
        first.pending["question"]
        == "Step 3 (Add slugify) has unsatisfied dependencies:\n- step 2: no handoff\nProceed anyway?"
    )
    assert first.pending["options"] == ["yes", "no"]
    assert (
        f"stepkit resume {first.run_id[:13]} --project-dir {sh(project_dir)} --answer yes"
        in first.output
    )
    assert first.output.startswith("PAUSED\n")
    data = first.to_json()
    assert data["outcome"] == "PAUSED" and data["exit_code"] == 5 and data["step"] == 3
    assert data["pending"] == {
        "node": "gate_blocked",
        "question": first.pending["question"],
        "options": ["yes", "no"],
    }

    second = resume(project_dir, first.run_id, "yes")
    assert second.run_id == first.run_id
    assert_paused_at(second, "gate_user_review")
    assert "slugify added" in second.pending["question"]
    assert second.pending["options"] == ["approve", "revise", "reject", "abort"]

    done = resume(project_dir, None, "approve")  # default: the latest unfinished run
    assert (done.outcome, done.exit_code) == ("STEP_COMPLETE", 0)
    assert done.output.startswith("STEP_COMPLETE\n")
    cp = checkpoint(done)
    assert cp["path"][:3] == ["resolve_step", "gate_blocked", "orient"]
    assert cp["path"][-2:] == ["gate_user_review", "end_success"]
    assert done.state["calls"]["resolve_step"] == 1  # finished nodes never run again
    assert done.state["stages_run"] == ["orient", "implement", "sweep", "handoff"]
    assert done.state["approved"] is True and done.state["gate_user_review_answer"] == "approve"
    with pytest.raises(UsageError, match="already finished"):
        resume(project_dir, done.run_id, "approve")


@pytest.mark.parametrize("answer", ["no", "not today"])
def test_gate_blocked_no_or_anything_else_blocks(project_dir, answer):
    first = start(project_dir, resolve_step="deps unsatisfied")
    done = resume(project_dir, first.run_id, answer)
    assert (done.outcome, done.exit_code) == ("STEP_BLOCKED", 3)
    assert "orient" not in checkpoint(done)["path"]


def test_gate_deviation_abort_proceed_and_guidance(project_dir):
    paused = start(project_dir, route_staleness="major deviation")
    assert_paused_at(paused, "gate_deviation")
    assert "the API moved" in paused.pending["question"] and "stale" in paused.pending["question"]
    aborted = resume(project_dir, paused.run_id, "abort")
    assert (aborted.outcome, aborted.exit_code) == ("STEP_REJECTED", 4)
    assert aborted.state["rejected_at"] == "the deviation gate"

    guided = resume(
        project_dir,
        start(project_dir, route_staleness="major deviation").run_id,
        "keep the old name",
    )
    assert_paused_at(guided, "gate_user_review")
    assert guided.state["user_guidance"] == "keep the old name"
    assert ["gate_deviation", "implement", "other"] in checkpoint(guided)["edges"]

    proceeded = resume(
        project_dir, start(project_dir, route_staleness="major deviation").run_id, "proceed"
    )
    assert_paused_at(proceeded, "gate_user_review")
    assert proceeded.state["user_guidance"] == ""


def test_gate_user_review_revise_asks_get_revision_then_loops_back(project_dir):
    at_review = start(project_dir)
    assert_paused_at(at_review, "gate_user_review")
    at_revision = resume(project_dir, at_review.run_id, "revise")
    assert_paused_at(at_revision, "get_revision")
    assert at_revision.pending["question"] == "What should change?"
    assert at_revision.pending["options"] == []
    assert '--answer "<your answer>"' in at_revision.output

    with pytest.raises(UsageError, match="an empty answer is not accepted.*nothing changed"):
        resume(project_dir, at_review.run_id, "   ")  # non-empty is required
    again = resume(project_dir, at_review.run_id)  # no answer, no TTY: pauses again
    assert_paused_at(again, "get_revision")

    back = resume(project_dir, at_review.run_id, "rename slug to slugify")
    assert_paused_at(back, "gate_user_review")  # the earlier "revise" is not reused
    assert back.state["fix_instructions"] == "rename slug to slugify"
    assert back.state["fix_history"] == ["revision requested: rename slug to slugify"]
    assert back.state["stages_run"].count("implement") == 2
    done = resume(project_dir, at_review.run_id, "approve")
    assert done.exit_code == 0


def test_gate_user_review_free_text_goes_to_revise_from_choice(project_dir):
    at_review = start(project_dir)
    back = resume(project_dir, at_review.run_id, "please add a docstring")
    assert_paused_at(back, "gate_user_review")
    assert back.state["revision_choice"] == "please add a docstring"
    assert back.state["calls"]["revise_from_choice"] == 1
    assert ["gate_user_review", "revise_from_choice", "other"] in checkpoint(back)["edges"]


def test_pre_answers_only_for_gate_blocked_and_gate_deviation(project_dir, monkeypatch, capsys):
    monkeypatch.setenv("STEP_AUTOAPPROVE", "1")
    result = start(
        project_dir,
        answers={"gate_blocked": "yes", "gate_deviation": "proceed"},
        resolve_step="deps unsatisfied",
        route_staleness="major deviation",
    )
    assert_paused_at(result, "gate_user_review")  # no environment variable answers the final gate
    assert result.state["gate_blocked_answer"] == "yes"
    assert checkpoint(result)["settings"]["answers"] == {}  # used once, then gone

    with pytest.raises(UsageError) as info:
        start(project_dir, answers={"gate_user_review": "approve"})
    assert str(info.value) == (
        "--answer gate_user_review=…: the final approval gate can only be answered "
        "after its question is shown (pre-answerable: gate_blocked, gate_deviation)"
    )
    with pytest.raises(UsageError, match="node get_revision can only be answered after"):
        start(project_dir, answers={"get_revision": "x"})
    with pytest.raises(UsageError, match="no approval or input node 'orient'"):
        start(project_dir, answers={"orient": "x"})
    runs_before = len(list((store_dir(project_dir) / "runs").iterdir()))
    assert (
        main(["run", "--project-dir", str(project_dir), "--answer", "gate_user_review=approve"])
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        (
            "stepkit: error: --answer gate_user_review=…: the final approval gate can only be answered "
            "after its question is shown (pre-answerable: gate_blocked, gate_deviation)"
        )
    ]
    assert main(["run", "--project-dir", str(project_dir), "--answer", "gate_blocked"]) == 2
    assert "expected NODE=TEXT" in capsys.readouterr().err
    assert len(list((store_dir(project_dir) / "runs").iterdir())) == runs_before  # no run started


def test_interrupted_implement_is_never_rerun(project_dir):
    with pytest.raises(RunInterrupted) as info:
        start(project_dir, implement="interrupt")
    cp = json.loads(
        (store_dir(project_dir) / "runs" / info.value.run_id / "state.json").read_text()
    )
    assert (cp["status"], cp["node"], cp["phase"]) == ("interrupted", "implement", "started")
    assert (
        info.value.resume_command
        == f"stepkit resume {info.value.run_id} --project-dir {sh(project_dir)}"
    )
    with pytest.raises(UsageError, match="is not waiting for an answer"):
        resume(project_dir, info.value.run_id, "approve")

    done = resume(project_dir, None)
    assert (done.outcome, done.exit_code) == ("STEP_FAILED", 1)
    assert done.state["failure_reason"] == (
        "implement was interrupted mid-edit; a coder is never re-run on a possibly half-edited tree — "
        "inspect the tree and start a new run"
    )
    assert checkpoint(done)["edges"][-1] == ["implement", "end_failure", "interrupted"]
    assert "implement" not in done.state.get("stages_run", [])


def test_interrupted_gate_node_is_rerun(project_dir):
    with pytest.raises(RunInterrupted):
        start(project_dir, verify_build="interrupt/pass")
    resumed = resume(project_dir, None)
    assert_paused_at(resumed, "gate_user_review")
    cp = checkpoint(resumed)
    assert cp["visits"]["verify_build"] == 1 and cp["path"].count("verify_build") == 1
    assert resumed.state["calls"]["verify_build"] == 1


def test_default_run_is_the_latest_unfinished_one(project_dir):
    older = start(project_dir, resolve_step="deps unsatisfied")
    newer = start(project_dir, route_staleness="major deviation")
    finished = resume(project_dir, start(project_dir).run_id, "approve")
    assert finished.exit_code == 0
    assert resume(project_dir, None, "abort").run_id == newer.run_id  # not the finished one
    assert resume(project_dir, None, "no").run_id == older.run_id


def test_a_moved_project_resumes_in_its_new_place(project_dir, tmp_path):
    paused = start(project_dir, resolve_step="deps unsatisfied")
    moved = project_dir.rename(tmp_path / "moved")
    done = resume(moved, paused.run_id, "no")
    assert done.exit_code == 3
    stored = json.loads((store_dir(moved) / "runs" / paused.run_id / "state.json").read_text())[
        "settings"
    ]
    assert (stored["project_dir"], stored["plans_dir"]) == (".", "plans")  # relative to the project
    settings = RunStore(moved).open(paused.run_id).load().settings
    assert (settings["project_dir"], settings["plans_dir"]) == (str(moved), str(moved / "plans"))


def test_resume_errors(project_dir):
    with pytest.raises(UsageError, match="no paused or interrupted run"):
        resume(project_dir, None)
    with pytest.raises(UsageError, match="no run 'nope'"):
        resume(project_dir, "nope")
    with pytest.raises(UsageError, match="is not a directory"):
        resume(project_dir / "missing", None)
