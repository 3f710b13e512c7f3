"""``stepkit mcp [--project-dir DIR]``: stepkit as an MCP server over stdio.

An orchestrating agent (Claude Code: ``claude mcp add stepkit -- stepkit
mcp``) calls these tools; each calls the Python API (:mod:`stepkit.api`) and
returns a bounded result, never a whole log:

- ``status``, ``detect``, ``verify``, ``check_handoff``, ``graph``: what the
  commands of the same names print with ``--json``;
- ``run_step`` and ``resume``: the run's outcome, exit code, run id, gate
  summaries, usage, clipped output and, when it paused, the pending
  question with its options.  The orchestrator asks its human and calls
  ``resume`` with the answer.

Human gates stay human: the server answers no question itself.  Its stdin
is the protocol (the SDK gives handlers the null device), so a question
pauses the run; ``run_step`` takes pre-answers only for the nodes
``--answer`` takes them for, never the final approval.

Long calls (``run_step``, ``resume``, ``verify``) send progress
notifications, one per node or gate, when the client asked for them.  A bad
argument or a refused call is a tool error with stepkit's one-line message.
Nothing but the protocol is written to stdout.

Needs the MCP SDK: ``pip install 'stepkit[mcp]'``.
"""

# No ``from __future__ import annotations``: the SDK reads the tools'
# annotations at run time to build their input schemas and find the Context
# parameter, and Context is imported only when the server is built.

import argparse
import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stepkit.errors import StepkitError
from stepkit.hookspecs import hookimpl
from stepkit.shown import shown
from stepkit.text import visible

#: Bounds on the text a tool returns (the full text stays in the run dir).
MAX_OUTPUT_CHARS = 6000
MAX_QUESTION_CHARS = 4000
MAX_EVIDENCE_CHARS = 1500


#: How long a stop signal waits for the steps being run to save their checkpoints.
STOP_WAIT_S = 60.0


def run(args: argparse.Namespace) -> int:
    """Serve until the client closes the connection.  SIGTERM and SIGHUP
    (and Ctrl-C) stop it as they stop ``stepkit run``: each step being run
    stops its commands and saves its checkpoint as interrupted (a later
    resume goes on), then the server exits 128 + the signal."""
    from stepkit.engine.interrupts import request_stop, signal_label, signal_number

    server = build_server(args.project_dir)
    try:
        server.run("stdio")
    except KeyboardInterrupt as exc:
        signum = signal_number(exc)
        request_stop(signum)  # the steps run in worker threads: no signal reaches them
        _RUNS.wait_idle(STOP_WAIT_S)
        print(f"stepkit: error: interrupted ({signal_label(signum)})", file=sys.stderr, flush=True)
        # the event loop was cut short, and its idle worker threads (not
        # daemons) would keep the process alive: every checkpoint is saved
        os._exit(128 + signum)
    return 0


class _Runs:
    """The tool calls running in worker threads now."""

    def __init__(self) -> None:
        self.count = 0
        self.idle = threading.Condition()

    @contextlib.contextmanager
    def running(self) -> Any:
        with self.idle:
            self.count += 1
        try:
            yield
        finally:
            with self.idle:
                self.count -= 1
                self.idle.notify_all()

    def wait_idle(self, seconds: float) -> None:
        with self.idle:
            self.idle.wait_for(lambda: self.count == 0, timeout=seconds)


_RUNS = _Runs()


def build_server(default_project: str = ".") -> Any:
    """The MCP server with stepkit's tools; ``default_project`` is the
    project a call without ``project_dir`` works on.

    :raises StepkitError: the MCP SDK is not installed.
    """
    try:
        import anyio
        from mcp.server.mcpserver import Context, MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        raise StepkitError("stepkit mcp needs the MCP SDK: pip install 'stepkit[mcp]'") from None
    from stepkit import __version__, api

    server = MCPServer("stepkit", version=__version__, instructions=INSTRUCTIONS)

    def project(project_dir: str | None) -> str:
        return project_dir or default_project

    async def call(work: Callable[[], Any]) -> Any:
        """``work()`` in a worker thread (a run blocks for minutes), a stepkit
        error coming back as a tool error with its one-line message, made
        visible (:mod:`stepkit.shown`)."""

        def tracked() -> Any:
            with _RUNS.running():
                return work()

        try:
            return await anyio.to_thread.run_sync(tracked)
        except StepkitError as exc:
            raise ToolError(visible(one_line(str(exc)))) from None
        except api.RunInterrupted as exc:
            raise ToolError(
                visible(f"run {exc.run_id} was interrupted; call resume to continue it")
            ) from None

    def progress(ctx: Context, total: float | None = None) -> Progress:
        """A :class:`Progress` that sends the client progress notifications
        from the worker thread (a no-op when the call has no progress token)."""
        token = anyio.lowlevel.current_token()

        def send(done: float, message: str) -> None:
            # a client gone or slow must never break the run it is told about
            with contextlib.suppress(Exception):
                anyio.from_thread.run(
                    ctx.report_progress, done, total, visible(message), token=token
                )

        return Progress(send)

    def tool(**options: Any) -> Callable[[Callable[..., Any]], Any]:
        """``server.tool``: every tool is registered through here, and what
        it answers is made visible (:mod:`stepkit.shown`), every string of
        it, whatever field a tool adds."""

        def register(answer: Callable[..., Any]) -> Any:
            @functools.wraps(answer)  # the SDK reads the signature for the input schema
            async def answered(*args: Any, **kwargs: Any) -> Any:
                return shown(await answer(*args, **kwargs))

            return server.tool(**options)(answered)

        return register

    @tool(
        description="The plan repo's steps, their status, dependencies and handoffs "
        "(stepkit status --json)."
    )
    async def status(
        project_dir: str | None = None, plans_dir: str | None = None
    ) -> dict[str, Any]:
        return await call(lambda: api.plan_status(project(project_dir), plans_dir))

    @tool(
        description="Each gate's command (format, lint, build, tests) and the plugin that "
        "chose it, without running anything (stepkit detect --json)."
    )
    async def detect(project_dir: str | None = None) -> dict[str, Any]:
        return await call(lambda: api.detect_gates(project(project_dir)))

    @tool(
        description="Run the format, lint, build and test gates; returns ok and one summary "
        "per gate (a gate with no command is NOT RUN, not a pass)."
    )
    async def verify(ctx: Context, project_dir: str | None = None) -> dict[str, Any]:
        report = progress(ctx, total=4)

        def work() -> dict[str, Any]:
            data = api.verify(project(project_dir), on_gate=report.gate)
            return {**data, "gates": [gate_summary(g) for g in data["gates"]]}

        return await call(work)

    @tool(
        description="Check a handoff file against the step protocol's schema; returns ok "
        "and its problems."
    )
    async def check_handoff(path: str) -> dict[str, Any]:
        from stepkit.cli.check_handoff import check_file

        def work() -> dict[str, Any]:
            problems = check_file(Path(path))
            return {"path": path, "ok": not problems, "problems": problems}

        return await call(work)

    @tool(
        description="The step-runner graph (or a graph file) as Mermaid text or JSON; with "
        "run_id, the path that run took."
    )
    async def graph(
        graph: str | None = None,
        run_id: str | None = None,
        project_dir: str | None = None,
        format: str = "mermaid",
    ) -> dict[str, Any]:
        if format not in ("mermaid", "json"):
            raise ToolError(f"format {format!r}: use mermaid or json")
        return await call(lambda: draw_graph(graph, run_id, project(project_dir), format))

    @tool(
        description=(
            "Run one step of the plan (default: the next one) through the step-runner graph. Returns "
            "the outcome (STEP_COMPLETE, STEP_BLOCKED, STEP_REJECTED, STEP_FAILED or PAUSED), run_id, "
            "gate summaries and, when PAUSED, the pending question and its options: ask your human "
            "and call resume with their answer. The final approval is never answered for them. "
            "worktree=true runs it on its own branch stepkit/NN-slug in a git work tree outside the "
            "user's tree (merge=true merges the completed step when that is clean)."
        )
    )
    async def run_step(
        ctx: Context,
        step: int | str | None = None,
        prompt: str | None = None,
        project_dir: str | None = None,
        plans_dir: str | None = None,
        engine: str | None = None,
        coder: str | None = None,
        reviewer: str | None = None,
        sets: dict[str, Any] | None = None,
        answers: dict[str, str] | None = None,
        rerun: bool = False,
        worktree: bool | None = None,
        merge: bool = False,
    ) -> dict[str, Any]:
        report = progress(ctx)
        result = await call(
            lambda: api.run_step(
                prompt=prompt,
                step=step,
                plans_dir=plans_dir,
                project_dir=project(project_dir),
                engine=engine,
                coder=coder,
                reviewer=reviewer,
                sets=sets,
                answers=answers,
                rerun=rerun,
                observers=[report],
                worktree=worktree,
                merge=merge,
            )
        )
        return run_summary(result)

    @tool(
        description=(
            "Continue a paused or interrupted run (default: the latest unfinished one); answer is "
            "the human's answer to the question it paused at. Returns what run_step returns."
        )
    )
    async def resume(
        ctx: Context,
        run_id: str | None = None,
        answer: str | None = None,
        project_dir: str | None = None,
    ) -> dict[str, Any]:
        report = progress(ctx)
        result = await call(
            lambda: api.resume_run(
                run_id=run_id, answer=answer, project_dir=project(project_dir), observers=[report]
            )
        )
        return run_summary(result)

    return server


INSTRUCTIONS = (
    "stepkit executes one step of a phased implementation plan (plans/steps/NN-*.md) with its "
    "gates run by the harness. Call status to see the steps, run_step to run one, and resume "
    "with the human's answer when a run pauses. Never answer a pending question yourself: "
    "show it to the human."
)


class Progress:
    """An observer (registered for one run) that reports each node or gate
    through ``send(done, message)``."""

    def __init__(self, send: Callable[[float, str], None]):
        self.send = send
        self.done = 0

    @hookimpl
    def stepkit_node_started(
        self, run_id: str, node: str, kind: str, state: dict[str, Any]
    ) -> None:
        self.send(self.done, f"{node} started")

    @hookimpl
    def stepkit_node_finished(
        self, run_id: str, node: str, route: str | None, duration_s: float, state: dict[str, Any]
    ) -> None:
        self.done += 1
        self.send(
            self.done, f"{node} finished in {duration_s:.1f} s" + (f" → {route}" if route else "")
        )

    def gate(self, result: Any) -> None:
        """``on_gate`` of :func:`stepkit.api.verify`."""
        self.done += 1
        self.send(self.done, f"{result.name}: {result.status}")


def run_summary(result: Any) -> dict[str, Any]:
    """A run's ``--json`` object, bounded: gates as summaries, output and
    question clipped, the full text left in the run directory."""
    from stepkit.workspace.evidence import clip_middle

    data = result.to_json()
    data["gates"] = [gate_summary(g) for g in data["gates"]]
    data["output"] = clip_middle(data["output"], MAX_OUTPUT_CHARS)
    data["run_dir"] = result.run_dir
    if "pending" in data:
        pending = data["pending"]
        pending["question"] = clip_middle(pending["question"] or "", MAX_QUESTION_CHARS, "question")
        pending["how_to_answer"] = (
            f"ask the human, then call resume with run_id={result.run_id!r} and their answer"
        )
    return data


def gate_summary(gate: dict[str, Any]) -> dict[str, Any]:
    """A gate's public record with its evidence clipped (kept only when it did
    not pass: a pass needs no excerpt); the full output is in ``log``."""
    from stepkit.records import FAILED_STATUSES
    from stepkit.workspace.evidence import clip_middle

    summary = {key: value for key, value in gate.items() if key != "evidence"}
    if gate.get("status") in FAILED_STATUSES and gate.get("evidence"):
        summary["evidence"] = clip_middle(gate["evidence"], MAX_EVIDENCE_CHARS, "evidence")
    return summary


def draw_graph(
    source: str | None, run_id: str | None, project_dir: str, fmt: str
) -> dict[str, Any]:
    """What ``stepkit graph`` prints, as one object."""
    from stepkit.cli.graph import graph_json, run_graph
    from stepkit.graph.diagram import render_mermaid

    the_graph, path, edges = run_graph(source, run_id, project_dir)
    if fmt == "json":
        return graph_json(the_graph, run_id, path, edges)
    return {
        "format": "mermaid",
        "text": render_mermaid(the_graph, highlight_path=path, highlight_edges=edges),
    }


def one_line(message: str) -> str:
    """The first line of a message (stepkit's errors are one line; be sure)."""
    return (message.strip().splitlines() or ["error"])[0]
