"""Stub script callables, a stub stage runner and graph-file builders for the
graph, engine and resume tests (imported as ``tests.support.graph_helpers:<name>`` by the
graphs the tests write; the tests directory is on sys.path under pytest and
is put on PYTHONPATH for subprocess runs).

``scripted`` is the workhorse: ``state["script"][node]`` says what the node
does on each visit — a route label, ``next``, ``fault`` (StageFault),
``crash`` (an exception), ``interrupt`` (Ctrl-C; ``interrupt/X`` only the
first time, then X), or a list of those consumed one per visit (the
last repeats).  Visits are counted in ``state["calls"]``.

The engine refuses updates a node's ``outputs`` do not declare, so
:func:`write_graph` declares :data:`STUB_OUTPUTS` (the keys these stubs set)
on every script and stage node; a test that makes a stub set other keys
(``stub_updates``) lists them in the node's ``outputs``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import yaml

from stepkit.records import Outcome, Question, StageContext, StageFault, Usage
from tests.support.waiting import wait_until

#: the folder subprocess runs put on PYTHONPATH to import ``tests.support``
IMPORT_ROOT = Path(__file__).resolve().parents[2]
#: The state keys the callables below set.
STUB_OUTPUTS = [
    "calls",
    "stages_run",
    "partial",
    "count",
    "attempts_used",
    "seen",
    "probe",
    "secret_echo",
    "started_at_tokens",
    "colour",
    "slow_done",
]
#: The keys the callables below read, declared in every graph :func:`write_graph`
#: writes so a test can set them with ``sets`` (a graph file's own tunables).
STUB_TUNABLES: dict[str, Any] = {
    "count": 0,
    "script": {},
    "stub_updates": {},
    "fail_times": 0,
    "stop_at": None,
    "note": "",
    "barrier": "",
}
#: set at test teardown so abandoned (timed-out) node threads end
RELEASE = threading.Event()


def scripted(ctx: StageContext, played: dict[str, Any] | None = None) -> Outcome:
    """``played``: the ``script`` and ``stub_updates`` a test's closure gives
    (for the built-in graph, which takes no keys of its own); default: the state's."""
    source = ctx.state if played is None else played
    calls = dict(ctx.state.get("calls") or {})
    n = calls.get(ctx.node, 0)
    calls[ctx.node] = n + 1
    plan = (source.get("script") or {}).get(ctx.node, "next")
    action = plan[min(n, len(plan) - 1)] if isinstance(plan, list) else plan
    updates: dict[str, Any] = {
        "calls": calls,
        **(source.get("stub_updates") or {}).get(ctx.node, {}),
    }
    if action == "fault":
        raise StageFault(f"{ctx.node} fault #{n + 1}", updates={"partial": ctx.node})
    if action == "crash":
        raise ValueError(f"{ctx.node} crashed #{n + 1}")
    if action.startswith("interrupt"):  # Ctrl-C while the node runs; "interrupt/X": once, then X
        marker = Path(ctx.settings["project_dir"]) / f"interrupted-{ctx.node}"
        if not marker.exists() or "/" not in action:
            marker.touch()
            raise KeyboardInterrupt
        action = action.split("/", 1)[1]
    return Outcome(route=None if action == "next" else action, updates=updates)


def stage_runner(name: str, ctx: StageContext, played: dict[str, Any] | None = None) -> Outcome:
    """A stub for stepkit.protocol.stages.run_stage: scripted by node id, records the stage name."""
    outcome = scripted(ctx, played)
    outcome.updates["stages_run"] = [*ctx.state.get("stages_run", []), name]
    return outcome


def go(ctx: StageContext) -> Outcome:
    return Outcome()


def bump(ctx: StageContext) -> Outcome:
    return Outcome(updates={"count": int(ctx.state.get("count", 0)) + 1})


def loop_until(ctx: StageContext) -> Outcome:
    """Route 'again' until count reaches state['stop_at'] (None: forever)."""
    count = int(ctx.state.get("count", 0)) + 1
    stop_at = ctx.state.get("stop_at")
    return Outcome(
        route="done" if stop_at is not None and count >= stop_at else "again",
        updates={"count": count},
    )


def hang(ctx: StageContext) -> Outcome:
    RELEASE.wait(20)
    return Outcome()


def flaky(ctx: StageContext) -> Outcome:
    """Fail (StageFault) the first ``state["fail_times"]`` attempts, counted in a file
    (attempts of one visit share their state, so the count cannot live there)."""
    counter = Path(ctx.settings["project_dir"]) / "flaky.count"
    attempt = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(attempt))
    if attempt <= int(ctx.state.get("fail_times", 0)):
        raise StageFault(f"attempt {attempt} failed")
    return Outcome(updates={"attempts_used": attempt})


def peek_checkpoint(ctx: StageContext) -> Outcome:
    """What state.json says while this node runs."""
    import json

    checkpoint = json.loads((ctx.run_dir / "state.json").read_text())
    return Outcome(
        updates={
            "seen": {
                "node": checkpoint["node"],
                "phase": checkpoint["phase"],
                "status": checkpoint["status"],
            }
        }
    )


def count_installed(ctx: StageContext) -> Outcome:
    """Append to ``installed_seen`` how many files the run's installed-files
    fingerprint holds, as this node's settings give it."""
    from stepkit.workspace.gate_commands import INSTALLED_KEY

    seen = [*ctx.state.get("installed_seen", []), len(ctx.settings.get(INSTALLED_KEY) or {})]
    return Outcome(updates={"installed_seen": seen})


def settings_probe(ctx: StageContext) -> Outcome:
    """Copy what stepkit_configure put in the settings into the state."""
    return Outcome(updates={"probe": ctx.settings.get("colour_seen")})


def wrong_type(ctx: StageContext) -> Any:
    return {"route": "x"}


def spend_tokens(ctx: StageContext) -> Outcome:
    ctx.usage = ctx.usage.add(Usage(input_tokens=100, output_tokens=20, cost_usd=0.5))
    ctx.emit("llm_call", node="spoofed", model="stub", api_key="sk-ant-abcdefghijklmnop1234")
    return Outcome(updates={"secret_echo": "token=abcd1234efgh5678"})


def spend_then_fault(ctx: StageContext) -> Outcome:
    """Spend 100 input tokens per attempt and fault the first ``state["fail_times"]``
    attempts; the attempt number is read off the usage the attempt starts from."""
    started_at = ctx.usage.input_tokens
    ctx.usage = ctx.usage.add(Usage(input_tokens=100))
    if started_at // 100 < int(ctx.state.get("fail_times", 0)):
        raise StageFault(f"attempt {started_at // 100 + 1} failed")
    return Outcome(updates={"started_at_tokens": started_at})


def ask_inside(ctx: StageContext) -> Outcome:
    assert ctx.ask is not None
    answer = ctx.ask(Question(node=ctx.node, kind="input", text="Which colour?", non_empty=True))
    return Outcome(updates={"colour": answer})


def wait_for_go(ctx: StageContext) -> Outcome:
    """A barrier: record a start, then wait for the test's "go" file."""
    barrier = Path(ctx.state["barrier"])
    with open(barrier / "started", "a") as fh:
        fh.write(f"{ctx.node}\n")
    wait_until((barrier / "go").exists, "go file from the test")
    return Outcome(updates={"slow_done": True})


def render_plain(ctx: StageContext) -> str:
    """An end renderer that does not start with the sentinel (the engine adds it)."""
    return f"ended at {ctx.node}; reason: {ctx.state.get('failure_reason')}"


def render_crash(ctx: StageContext) -> str:
    raise RuntimeError("renderer broke")


def render_signal_wrapped(ctx: StageContext) -> str:
    """SIGTERM arrives while the renderer runs code that turns whatever
    interrupts it into an error of its own (pydantic building a model's
    schema on first use raises a ``SchemaError`` for it)."""
    import os
    import signal

    try:
        os.kill(os.getpid(), signal.SIGTERM)
        signal.sigtimedwait((), 0)  # a call returns: the handler has run by now
    except KeyboardInterrupt as exc:
        raise RuntimeError(f"Error building serializer: {type(exc).__name__}: {exc}") from None
    return "STEP_COMPLETE\nnever interrupted"


END_NODES = {
    "end_success": {
        "kind": "end",
        "sentinel": "STEP_COMPLETE",
        "exit_code": 0,
        "output": "STEP_COMPLETE\ncount={count}",
    },
    "end_failure": {
        "kind": "end",
        "sentinel": "STEP_FAILED",
        "exit_code": 1,
        "output": "STEP_FAILED\nReason: {failure_reason}",
    },
}


def write_graph(
    directory: Path, nodes: dict[str, Any], name: str = "g.yaml", **settings: Any
) -> Path:
    """Write a graph file: the given nodes (script and stage nodes declaring
    :data:`STUB_OUTPUTS` too) plus the two standard end nodes."""
    declared = {
        node_id: {**node, "outputs": list(dict.fromkeys([*node.get("outputs", []), *STUB_OUTPUTS]))}
        if node.get("kind") in ("script", "stage")
        else node
        for node_id, node in nodes.items()
    }
    data = {
        "name": name.removesuffix(".yaml"),
        "start": next(iter(nodes)),
        "initial_state": dict(STUB_TUNABLES),
        **settings,
        "nodes": {**declared, **{k: v for k, v in END_NODES.items() if k not in nodes}},
    }
    path = directory / name
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def add_history(ctx: StageContext) -> Outcome:
    """Add one item, ``"<node>"``, to the ``history`` list (the graph appends it)."""
    return Outcome(updates={"history": [ctx.node]})


def whole_history(ctx: StageContext) -> Outcome:
    """Return ``history`` as one string: not what an append field takes."""
    return Outcome(updates={"history": ctx.node})


def set_undeclared(ctx: StageContext) -> Outcome:
    """Set keys no stub declares (``surprise``, ``other``) beside a declared one."""
    return Outcome(updates={"count": 1, "surprise": True, "other": 2})


def set_engine_keys(ctx: StageContext) -> Outcome:
    """Set only keys the engine owns (its records, the node's own ``_fault``)."""
    return Outcome(
        updates={"fault_note": "noted", "last_fault_node": ctx.node, f"{ctx.node}_fault": "none"}
    )


def fault_with_undeclared(ctx: StageContext) -> Outcome:
    raise StageFault("broke", updates={"partial": ctx.node, "stray": 1})
