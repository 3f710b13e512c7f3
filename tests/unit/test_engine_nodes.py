"""The engine on small graphs: every node kind, every failure, checkpoints,
events, observers and usage."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import pytest

import stepkit
from stepkit.api import RunResult, resume_run, run_step
from stepkit.engine.interrupts import RunInterrupted
from stepkit.errors import UsageError
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.store import store_dir
from tests.support.graph_helpers import RELEASE, stage_runner, write_graph


class Recorder:
    """An observer plugin that records every hook call."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    @stepkit.hookimpl
    def stepkit_node_started(self, run_id, node, kind, state):
        self.calls.append(("started", node, kind))

    @stepkit.hookimpl
    def stepkit_node_finished(self, run_id, node, route, duration_s, state):
        self.calls.append(("finished", node, route))

    @stepkit.hookimpl
    def stepkit_run_finished(self, run_id, outcome, exit_code, output):
        self.calls.append(("run", outcome, exit_code))


@pytest.fixture(autouse=True)
def _release_hung_nodes():
    RELEASE.clear()
    yield
    RELEASE.set()


def run(
    project_dir: Path,
    nodes: dict,
    sets: dict | None = None,
    answers: dict | None = None,
    observers=(),
    **settings,
) -> RunResult:
    graph = write_graph(project_dir, nodes, **settings)
    return run_step(
        project_dir=project_dir,
        graph=graph,
        sets=sets or {},
        answers=answers,
        pm=get_plugin_manager(builtins=["stepkit.plugins.ask"]),
        observers=observers,
        stage_runner=stage_runner,
    )


def checkpoint(result: RunResult) -> dict:
    return json.loads((Path(result.run_dir) / "state.json").read_text())


def events(result: RunResult, kind: str | None = None) -> list[dict]:
    lines = (Path(result.run_dir) / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if kind is None or e["event"] == kind]


def script(call: str = "scripted", **fields) -> dict:
    return {"kind": "script", "call": f"tests.support.graph_helpers:{call}", **fields}


# -- node kinds ---------------------------------------------------------------


def test_script_routes_loop_and_checkpoint(project_dir):
    recorder = Recorder()
    result = run(
        project_dir,
        {
            "first": script("bump", next="second"),
            "second": script("loop_until", routes={"again": "first", "done": "end_success"}),
        },
        sets={"stop_at": 3},
        observers=[recorder],
    )
    assert (result.outcome, result.exit_code, result.output) == (
        "STEP_COMPLETE",
        0,
        "STEP_COMPLETE\ncount=4",
    )
    cp = checkpoint(result)
    assert cp["status"] == "finished" and cp["phase"] == "finished" and cp["node"] == "end_success"
    assert cp["path"] == ["first", "second", "first", "second", "end_success"]
    assert cp["edges"] == [
        ["first", "second", "next"],
        ["second", "first", "again"],
        ["first", "second", "next"],
        ["second", "end_success", "done"],
    ]
    assert cp["visits"] == {"first": 2, "second": 2, "end_success": 1}
    assert cp["state"]["count"] == 4 and cp["settings"]["sets"] == {"stop_at": 3}
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", result.run_id)
    assert (store_dir(project_dir) / ".gitignore").read_text() == "*\n"
    assert (Path(result.run_dir) / "output.txt").read_text() == result.output
    assert (Path(result.run_dir) / "logs").is_dir()
    finished = events(result, "node_finished")
    assert [(e["node"], e["route"], e["to"]) for e in finished][:2] == [
        ("first", "next", "second"),
        ("second", "again", "first"),
    ]
    assert all(isinstance(e["duration_s"], float) for e in finished)
    assert recorder.calls[:3] == [
        ("started", "first", "script"),
        ("finished", "first", "second"),
        ("started", "second", "script"),
    ]
    assert recorder.calls[-1] == ("run", "STEP_COMPLETE", 0)


def test_the_engine_returns_the_public_run_result_itself(project_dir):
    result = run(project_dir, {"a": script("go", next="end_success")})
    assert type(result) is stepkit.RunResult is RunResult
    assert result.to_json()["outcome"] == "STEP_COMPLETE"


def test_checkpoint_says_started_while_a_node_not_run_again_on_resume_runs(project_dir):
    result = run(
        project_dir,
        {
            "first": script("bump", next="peek"),
            "peek": script("peek_checkpoint", next="end_success", rerun_on_resume=False),
        },
    )
    assert result.state["seen"] == {"node": "peek", "phase": "started", "status": "running"}


def test_checkpoint_names_a_rerunnable_node_next_while_it_runs(project_dir):
    # a kill now resumes at peek from the previous node's record, as from its own
    result = run(
        project_dir,
        {
            "first": script("bump", next="peek"),
            "peek": script("peek_checkpoint", next="end_success"),
        },
    )
    assert result.state["seen"] == {"node": "first", "phase": "finished", "status": "running"}


def test_stage_node_runs_the_named_stage(project_dir):
    result = run(
        project_dir,
        {
            "orient": {
                "kind": "stage",
                "stage": "orient",
                "next": "end_success",
                "outputs": ["plan_summary"],
            }
        },
        sets={"stub_updates": {"orient": {"plan_summary": "ok"}}},
    )
    assert result.exit_code == 0
    assert result.state["stages_run"] == ["orient"] and result.state["plan_summary"] == "ok"


def test_approval_options_free_text_and_updates(project_dir):
    nodes = {
        "ask": {
            "kind": "approval",
            "question": "Count is {count}. Go?",
            "options": ["go", "stop"],
            "on_other": "note",
            "other_key": "guidance",
            "pre_answer": True,
            "routes": {"go": "end_success", "stop": "end_failure"},
            "updates": {"stop": {"failure_reason": "stopped by the user"}},
        },
        "note": script("bump", next="end_success"),
    }
    assert run(project_dir, nodes, answers={"ask": "GO "}).exit_code == 0
    stopped = run(project_dir, nodes, answers={"ask": "stop"})
    assert stopped.exit_code == 1 and stopped.output == "STEP_FAILED\nReason: stopped by the user"
    other = run(project_dir, nodes, answers={"ask": "be careful"})
    assert other.exit_code == 0 and other.state["guidance"] == "be careful"
    assert other.state["ask_answer"] == "be careful" and other.state["count"] == 1
    assert checkpoint(other)["edges"][0] == ["ask", "note", "other"]
    assert events(other, "answered")[0]["plugin"] == "stepkit.plugins.ask"


def test_approval_other_as_and_unmatched_answer(project_dir):
    as_no = {
        "ask": {
            "kind": "approval",
            "question": "Go?",
            "options": ["yes", "no"],
            "other_as": "no",
            "pre_answer": True,
            "routes": {"yes": "end_success", "no": "end_failure"},
        }
    }
    assert run(project_dir, as_no, answers={"ask": "maybe"}).exit_code == 1
    strict = {"ask": {**as_no["ask"], "other_as": None}}
    strict["ask"].pop("other_as")
    with pytest.raises(UsageError, match="'maybe' is not an option .answer one of yes, no."):
        run(project_dir, strict, answers={"ask": "maybe"})  # refused before the run starts

    class Answers:  # a plugin's answer is refused by the engine, which asks again
        @stepkit.hookimpl
        def stepkit_ask(self, question):
            return "maybe"

    pm = get_plugin_manager(builtins=["stepkit.plugins.ask"])
    pm.register(Answers())
    paused = run_step(
        project_dir=project_dir,
        graph=write_graph(project_dir, strict),
        pm=pm,
        stage_runner=stage_runner,
    )
    assert paused.outcome == "PAUSED" and paused.pending["node"] == "ask"
    assert paused.pending["note"] == "'maybe' is not an option (answer one of yes, no)"
    assert (
        paused.output.splitlines()[1]
        == "The answer was not accepted: 'maybe' is not an option (answer one of yes, no)."
    )


def test_input_node_stores_the_answer_and_refuses_empty(project_dir):
    nodes = {
        "why": {
            "kind": "input",
            "question": "Why?",
            "key": "reason",
            "non_empty": True,
            "pre_answer": True,
            "next": "end_success",
        }
    }
    assert run(project_dir, nodes, answers={"why": "because"}).state["reason"] == "because"
    empty = run(project_dir, nodes, answers={"why": "  "})
    assert (
        empty.exit_code == 5
        and empty.pending["kind"] == "input"
        and empty.pending["non_empty"] is True
    )
    assert empty.pending["note"] == "an empty answer is not accepted"


def test_a_stop_signal_a_renderer_turned_into_its_own_error_stops_the_run(project_dir):
    """A stop signal is never a failure of the node it interrupted, even
    where the code it interrupted caught it and raised an error of its own:
    the run is saved interrupted, as the signal asked, and resumes."""
    nodes = {
        "a": script("go", next="end_success"),
        "end_success": {
            "kind": "end",
            "sentinel": "STEP_COMPLETE",
            "exit_code": 0,
            "render": "tests.support.graph_helpers:render_signal_wrapped",
        },
    }
    with pytest.raises(RunInterrupted) as stopped:
        run(project_dir, nodes)
    assert stopped.value.exit_code == 128 + signal.SIGTERM
    run_dir = store_dir(project_dir) / "runs" / stopped.value.run_id
    assert json.loads((run_dir / "state.json").read_text())["status"] == "interrupted"


def test_end_output_always_starts_with_the_sentinel(project_dir):
    plain = {
        "a": script("go", next="end_success"),
        "end_success": {
            "kind": "end",
            "sentinel": "STEP_COMPLETE",
            "exit_code": 0,
            "render": "tests.support.graph_helpers:render_plain",
        },
    }
    result = run(project_dir, plain)
    assert result.output == "STEP_COMPLETE\nended at end_success; reason: None"
    # a success whose renderer fails did not succeed: the run ends at the failure node
    broken = {
        "a": script("go", next="end_success"),
        "end_success": {
            **plain["end_success"],
            "render": "tests.support.graph_helpers:render_crash",
        },
        "end_failure": {
            "kind": "end",
            "sentinel": "STEP_FAILED",
            "exit_code": 1,
            "render": "tests.support.graph_helpers:render_plain",
        },
    }
    result = run(project_dir, broken)
    assert (result.outcome, result.exit_code) == ("STEP_FAILED", 1)
    assert result.output == (
        "STEP_FAILED\nended at end_failure; reason: "
        "node end_success failed: RuntimeError: renderer broke"
    )
    assert checkpoint(result)["edges"][-1] == ["end_success", "end_failure", "failure"]
    # the failure node's own renderer failing still ends with its sentinel and the reason
    both = {
        **broken,
        "end_failure": {
            **broken["end_failure"],
            "render": "tests.support.graph_helpers:render_crash",
        },
    }
    assert run(project_dir, both).output.splitlines() == [
        "STEP_FAILED",
        "(the output of end_failure could not be rendered: RuntimeError: renderer broke)",
        "Reason: node end_success failed: RuntimeError: renderer broke",
    ]


def test_end_node_when_gives_another_ending_when_its_key_is_set(project_dir):
    nodes = {
        "a": script(routes={"x": "end_failure", "y": "end_success"}, outputs=["refused"]),
        "end_failure": {
            "kind": "end",
            "sentinel": "STEP_FAILED",
            "exit_code": 1,
            "render": "tests.support.graph_helpers:render_plain",
            "when": {
                "refused": {
                    "sentinel": "STEP_REJECTED",
                    "exit_code": 4,
                    "output": "refused by {refused}",
                }
            },
        },
    }
    plain = run(project_dir, nodes, sets={"script": {"a": "x"}}, observers=[recorder := Recorder()])
    assert (plain.outcome, plain.exit_code) == ("STEP_FAILED", 1)
    assert plain.output == "STEP_FAILED\nended at end_failure; reason: None"
    refused = run(
        project_dir,
        nodes,
        sets={"script": {"a": "x"}, "stub_updates": {"a": {"refused": "the coder"}}},
        observers=[recorder],
    )
    assert (refused.outcome, refused.exit_code) == ("STEP_REJECTED", 4)
    assert refused.output == "STEP_REJECTED\nrefused by the coder"
    assert (
        checkpoint(refused)["outcome"] == "STEP_REJECTED" and checkpoint(refused)["exit_code"] == 4
    )
    finished = events(refused, "run_finished")[0]
    assert (finished["outcome"], finished["exit_code"]) == ("STEP_REJECTED", 4)
    assert [c for c in recorder.calls if c[0] == "run"] == [
        ("run", "STEP_FAILED", 1),
        ("run", "STEP_REJECTED", 4),
    ]


# -- failures -------------------------------------------------------------------


def test_crash_takes_the_fallback(project_dir):
    result = run(
        project_dir,
        {"a": script(next="end_success", fallback="b"), "b": script("go", next="end_failure")},
        sets={"script": {"a": "crash"}},
    )
    assert result.exit_code == 1
    assert result.state["failure_reason"] == "node a crashed: ValueError: a crashed #1"
    assert result.state["a_fault"] == result.state["failure_reason"]
    assert checkpoint(result)["edges"][0] == ["a", "b", "fallback"]


def test_stage_fault_keeps_its_updates_and_notes_the_fault(project_dir):
    result = run(
        project_dir,
        {
            "s": {
                "kind": "stage",
                "stage": "sweep",
                "next": "end_success",
                "fallback": "end_failure",
            }
        },
        sets={"script": {"s": "fault"}},
    )
    assert result.exit_code == 1
    assert result.state["fault_note"] == "s fault #1" == result.state["s_fault"]
    assert result.state["partial"] == "s" and result.state["last_fault_node"] == "s"


def test_fault_without_fallback_goes_to_the_failure_node(project_dir):
    result = run(project_dir, {"a": script(next="end_success")}, sets={"script": {"a": "fault"}})
    assert result.exit_code == 1
    assert result.output == "STEP_FAILED\nReason: node a faulted: a fault #1"
    assert checkpoint(result)["edges"] == [["a", "end_failure", "failure"]]


def test_retry_exhausted_then_fallback(project_dir):
    result = run(
        project_dir,
        {"a": script("flaky", next="end_success", max_attempts=3, fallback="end_failure")},
        sets={"fail_times": 5},
    )
    assert result.exit_code == 1 and result.state["fault_note"] == "attempt 3 failed"
    faults = events(result, "node_fault")
    assert [(f["attempt"], f["attempts"]) for f in faults] == [(1, 3), (2, 3), (3, 3)]


def test_retry_succeeds_within_the_budget(project_dir):
    result = run(
        project_dir,
        {"a": script("flaky", next="end_success", max_attempts=3, fallback="end_failure")},
        sets={"fail_times": 2},
    )
    assert result.exit_code == 0 and result.state["attempts_used"] == 3
    assert checkpoint(result)["visits"]["a"] == 1


def test_no_retry_unless_max_attempts_is_set(project_dir):
    result = run(
        project_dir,
        {"a": script("flaky", next="end_success", fallback="end_failure")},
        sets={"fail_times": 1},
    )
    assert result.exit_code == 1 and len(events(result, "node_fault")) == 1


def test_node_timeout(project_dir):
    started = time.monotonic()
    result = run(project_dir, {"a": script("hang", next="end_success", timeout=0.2)})
    assert time.monotonic() - started < 5
    assert result.exit_code == 1
    assert result.state["failure_reason"] == "node a timed out after 0.2 s"


def test_timeout_takes_the_fallback(project_dir):
    result = run(
        project_dir,
        {
            "a": script("hang", next="end_success", timeout=0.2, fallback="b"),
            "b": script("bump", next="end_success"),
        },
    )
    assert result.exit_code == 0 and result.state["a_fault"] == "node a timed out after 0.2 s"


def test_loop_cap(project_dir):
    result = run(
        project_dir,
        {"first": script("loop_until", routes={"again": "first", "done": "end_success"})},
        max_loop_iterations=5,
    )
    assert result.exit_code == 1
    assert result.state["failure_reason"] == "node first entered 6 times (loop cap 5)"
    assert checkpoint(result)["edges"][-1] == ["first", "end_failure", "loop cap"]
    assert checkpoint(result)["visits"]["first"] == 5


def test_run_timeout_ignores_the_fallback(project_dir):
    result = run(
        project_dir,
        {
            "a": script("hang", next="end_success", fallback="b"),
            "b": script("go", next="end_success"),
        },
        timeout=0.3,
    )
    assert result.exit_code == 1
    assert result.state["failure_reason"] == "run timed out after 0.3 s"
    assert checkpoint(result)["edges"] == [["a", "end_failure", "run timeout"]]


def test_unknown_route_and_wrong_return_type_are_crashes(project_dir):
    result = run(
        project_dir, {"a": script(routes={"ok": "end_success"})}, sets={"script": {"a": "sideways"}}
    )
    assert (
        result.state["failure_reason"]
        == "node a returned unknown route 'sideways' (expected one of: 'ok')"
    )
    result = run(project_dir, {"a": script("wrong_type", next="end_success")})
    assert result.state["failure_reason"] == "node a returned dict, not an Outcome"


def test_a_key_the_node_does_not_declare_is_a_node_fault(project_dir):
    result = run(project_dir, {"a": script("set_undeclared", next="end_success")})
    assert result.exit_code == 1
    assert result.output == (
        "STEP_FAILED\nReason: node a set 'other', 'surprise', which its outputs do not declare"
    )
    assert "surprise" not in result.state and result.state["count"] == 0
    declared = run(
        project_dir,
        {"a": script("set_undeclared", next="end_success", outputs=["surprise", "other"])},
    )
    assert declared.exit_code == 0 and declared.state["surprise"] is True


def test_a_faults_updates_with_an_undeclared_key_are_not_kept(project_dir):
    result = run(project_dir, {"a": script("fault_with_undeclared", next="end_success")})
    assert result.state["failure_reason"] == (
        "node a faulted: broke (its updates were not kept: node a set "
        "'stray', which its outputs do not declare)"
    )
    assert "partial" not in result.state and "stray" not in result.state


def test_the_engines_own_keys_need_no_declaring(project_dir):
    result = run(project_dir, {"a": script("set_engine_keys", next="end_success")})
    assert result.exit_code == 0
    assert (result.state["fault_note"], result.state["a_fault"]) == ("noted", "none")


def test_observer_errors_do_not_break_the_run(project_dir):
    class Broken:
        @stepkit.hookimpl
        def stepkit_node_started(self, run_id, node, kind, state):
            raise RuntimeError("display died")

    result = run(project_dir, {"a": script("go", next="end_success")}, observers=[Broken()])
    assert result.exit_code == 0
    assert events(result, "observer_error")[0]["error"] == "RuntimeError: display died"


def test_usage_is_summed_and_secrets_never_reach_the_run_store(project_dir, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-realkey-0123456789")
    result = run(
        project_dir,
        {"a": script("spend_tokens", next="b"), "b": script("spend_tokens", next="end_success")},
        sets={"note": "key sk-ant-realkey-0123456789"},
    )
    assert result.state["usage"]["input_tokens"] == 200 and result.state["usage"]["cost_usd"] == 1.0
    assert result.to_json()["usage"]["output_tokens"] == 40
    finished = events(result, "node_finished")
    assert finished[0]["tokens"]["input_tokens"] == 100
    llm = events(result, "llm_call")
    assert llm[0]["node"] == "spoofed" and llm[0]["model"] == "stub"
    for name in ("state.json", "events.jsonl", "output.txt"):
        text = (Path(result.run_dir) / name).read_text()
        assert "sk-ant-" not in text and "abcd1234efgh5678" not in text, name


@pytest.mark.parametrize(("fail_times", "exit_code", "spent"), [(2, 0, 300), (5, 1, 300)])
def test_usage_of_every_attempt_counts_and_each_attempt_starts_where_the_last_stopped(
    project_dir, fail_times, exit_code, spent
):
    result = run(
        project_dir,
        {
            "a": script(
                "spend_then_fault", next="end_success", max_attempts=3, fallback="end_failure"
            )
        },
        sets={"fail_times": fail_times},
    )
    assert result.exit_code == exit_code
    assert result.state["usage"]["input_tokens"] == spent
    assert events(result, "node_finished")[0]["tokens"]["input_tokens"] == spent
    if exit_code == 0:
        assert (
            result.state["started_at_tokens"] == 200
        )  # a budget checked against ctx.usage is per run


def test_ask_from_inside_a_script_pauses_and_resumes(project_dir):
    result = run(project_dir, {"a": script("ask_inside", next="end_success")})
    assert result.exit_code == 5 and result.pending["node"] == "a"
    resumed = resume_run(
        result.run_id,
        answer="blue",
        project_dir=project_dir,
        pm=get_plugin_manager(builtins=["stepkit.plugins.ask"]),
    )
    assert resumed.exit_code == 0 and resumed.state["colour"] == "blue"
