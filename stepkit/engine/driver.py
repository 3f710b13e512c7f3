"""The graph driver: runs a validated :class:`~stepkit.graph.model.Graph` node by
node, checkpointing after every node so a run can pause and resume.

What the engine guarantees:

- every path ends at an end node with a reason, never a traceback: a node
  that faults (StageFault, an exception, a timeout) takes its ``fallback``,
  else the graph's ``failure_node`` with ``state["failure_reason"]`` set;
  ``max_attempts`` retries a node only where it is set; a node whose
  updates set a key its ``outputs`` do not declare (the engine's own records
  aside) faults the same way;
  an update of a key the graph's state model lacks, or of a value of the
  wrong type, faults the same way, and a checkpoint whose state does not fit
  the model is not resumed;
- the graph's ``append`` fields get a node's new items added, in one place;
- the graph's ``recheck`` runs at every resume and before a successful end;
  when it names a node, the run goes there instead (the step-runner re-runs
  its gates when the tree changed since they verified it);
- a node entered more than ``max_loop_iterations`` times, and a run longer
  than the graph's ``timeout`` (active time, pauses excluded), end at the
  failure node;
- ``state.json`` is replaced atomically after every node finishes (phase
  ``finished``, with the next node), so a resumed run never re-runs a
  finished node.  A node that may not simply run again when it was cut off
  (``rerun_on_resume: false``: the coder) is also saved as it starts (phase
  ``started``), so that resume knows it was cut off; any other node cut off
  by a kill is run again from the previous node's record, as it would be
  from its own.  A stop signal saves the node it cut off (``started``).
  Stop signals are held back while the checkpoint is brought up to date,
  so it is never saved half-updated, and one that comes once the run has
  ended (finished or paused) leaves that ending as it is;
- every save is a temp file renamed over ``state.json``, never torn by a
  killed process; the saves where this process hands the run over (paused,
  ended, interrupted) and the one that says a not-re-runnable node started
  are also flushed to the disk (fsync) before the run goes on, so a power
  loss or a kernel crash cannot lose them (it may lose the saves between
  nodes, and resume then runs again nodes that are safe to run again);
- approval and input nodes ask through ``stepkit_ask``; a ``Paused`` answer
  saves the run as paused (exit code 5);
- Ctrl-C, SIGTERM and SIGHUP save the run as ``interrupted`` and stop the
  commands the running node started (they run in their own sessions, out
  of the terminal's reach), with what they detached;
- the first line of the output is the end node's sentinel; an end node
  whose renderer fails (the step-runner's success could not mark the plan
  complete) ends the run at the failure node with the reason instead;
- a node's ``ctx.usage`` starts at the run's usage so far (so a budget
  checked against it is a per-run budget), and only what the node spent is
  added to ``state["usage"]``, whether it finished, faulted or paused.

The engine never prints: it writes the run store and calls the observer hooks
(``stepkit_node_started``, ``stepkit_node_finished``,
``stepkit_run_finished``); the CLI and observers print.  The JSONL event log
is written here, through the run store, rather than by an observer plugin: it
is part of the run store's contract, it must also carry what stages
``ctx.emit``, and ``-p no:…`` must not be able to switch it off.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stepkit.engine.answers import Rejected, expected, read_answer
from stepkit.engine.asking import answer_route, pending_question, pending_record, question_for
from stepkit.engine.checkpoint import Checkpoint
from stepkit.engine.interrupts import (
    NodeTimeout,
    RunInterrupted,
    StopSignal,
    call_with_timeout,
    drop_held_signal,
    held_signals,
    signal_label,
    signal_number,
    signals_raised,
    stop_signals,
    swallowed_signal,
)
from stepkit.engine.pause import PAUSED_EXIT, pause_text
from stepkit.engine.retention import prune_after_run
from stepkit.engine.runstore import RunDir, is_live, jsonable, redacted, short_run_id
from stepkit.errors import UsageError
from stepkit.graph.model import ENGINE_KEYS, Graph
from stepkit.graph.nodes import (
    ApprovalNode,
    AskNode,
    EndNode,
    InputNode,
    Node,
    ScriptNode,
    StageNode,
    WorkNode,
)
from stepkit.graph.state import state_problem, value_problem
from stepkit.graph.templates import render_template
from stepkit.pluginmanager import first_answer
from stepkit.records import Outcome, Paused, Question, RunResult, StageContext, StageFault, Usage
from stepkit.text import guard_lines
from stepkit.workspace import supervision
from stepkit.workspace.worktree_record import COMMITS_AT
from stepkit.workspace.worktree_record import SETTING as WORKTREE

StageRunner = Callable[[str, StageContext], Outcome]
#: Called with each script or stage node before it runs (:func:`start_run`).
BeforeNode = Callable[[Node], None]


class _BadOutcome(Exception):
    """A node returned something the graph cannot route."""


@dataclass
class _Step:
    target: str
    key: str
    updates: dict[str, Any] = field(default_factory=dict)
    usage: Usage | None = None
    plugin: str | None = None


def start_run(
    graph: Graph,
    run: RunDir,
    pm: Any,
    settings: dict[str, Any],
    config: Any,
    state: dict[str, Any],
    stage_runner: StageRunner,
    before_node: BeforeNode | None = None,
) -> RunResult:
    """Run ``graph`` from its start node with ``state`` as the initial state.

    :param settings: run settings (``project_dir`` and ``plans_dir`` as
        absolute paths, ``answers`` by node, engine/coder/reviewer specs …);
        stored in the checkpoint so ``resume`` can rebuild the run.
    :param stage_runner: runs stage nodes (the engine knows no stage).
    :param before_node: called with each script or stage node, in the node's
        call, before it runs (what it raises is the node's fault).
    :raises RunInterrupted: a stop signal (Ctrl-C, SIGTERM, SIGHUP); the
        checkpoint is saved as interrupted.
    """
    checkpoint = Checkpoint.start(
        run.run_id,
        graph.source,
        graph.name,
        graph.start,
        settings,
        _plain(state),
        _now(),
        os.getpid(),
    )
    engine = _Engine(graph, run, pm, settings, config, stage_runner, checkpoint, before_node)
    engine.save()  # a run whose events say it started can be resumed, however soon it is killed
    engine.run.event("run_started", graph=graph.source, start=graph.start)
    return engine.drive(graph.start)


def resume_run(
    graph: Graph,
    run: RunDir,
    pm: Any,
    config: Any,
    checkpoint: Checkpoint,
    answer: str | None,
    stage_runner: StageRunner,
    before_node: BeforeNode | None = None,
) -> RunResult:
    """Continue a paused, interrupted or killed run from its checkpoint
    (``before_node``: as :func:`start_run` takes it).

    What the run's commands left running when its process was killed is
    stopped first (a ``leftovers_stopped`` event).  Finished nodes never run again.  The node that was cut off runs again
    when its ``rerun_on_resume`` allows (or it was a question); otherwise the
    run ends at the failure node with the node's ``interrupted_reason``.

    :param answer: the answer to the question the run paused at.
    :raises UsageError: the run finished, is still running, the answer is
        for a run that is not waiting for one or does not fit its question
        (nothing in the run changed), or the graph lost the node.
    """
    run_id = run.run_id
    status = checkpoint.status
    if status == "finished":
        raise UsageError(
            f"run {run_id} already finished ({checkpoint.outcome}); start a new run (stepkit run)"
        )
    run.read_parts(checkpoint)
    if is_live(run, checkpoint):
        raise UsageError(
            f"run {run_id} is still running (pid {checkpoint.pid}); resume it once it stops "
            f"(kill {checkpoint.pid} stops it)"
        )
    node_id = checkpoint.node
    pending = checkpoint.pending if status == "paused" else None
    if answer is not None and not pending:
        raise UsageError(
            f"run {run_id} is not waiting for an answer (it was {status} at {node_id}); "
            "resume it without --answer"
        )
    for name in filter(None, (node_id, checkpoint.next)):
        if name not in graph.nodes:
            raise UsageError(
                f"run {run_id}: its graph ({graph.source}) has no node '{name}' any more"
            )
    given = (
        checkpoint.settings.get("sets") or {}
    ).keys()  # --set values are state as the user gave them
    checkpoint.state = graph.state_model.reshaped(checkpoint.state, checkpoint.read_format)
    problem = state_problem(graph.state_model, checkpoint.state, graph.nodes.keys(), given)
    if problem:
        raise UsageError(
            f"run {run_id}: its checkpoint does not fit the graph's state: {problem}; nothing was run"
        )
    # a state that fits, brought to the shape the model has now
    checkpoint.state = graph.state_model.upgraded(checkpoint.state, checkpoint.read_format)

    if answer is not None and pending is not None:  # no pending with an answer: refused above
        _check_answer(run_id, pending, answer)

    settings = checkpoint.settings
    settings["answers"] = dict(settings.get("answers") or {})
    checkpoint.status, checkpoint.pending, checkpoint.pid = "running", None, os.getpid()
    checkpoint.outcome = checkpoint.exit_code = checkpoint.output = None
    checkpoint.resumes += 1
    engine = _Engine(graph, run, pm, settings, config, stage_runner, checkpoint, before_node)
    leftovers = supervision.stop_leftovers(
        str(run.path)
    )  # a SIGKILLed run's coder may still be editing
    if leftovers:
        engine.run.event(
            "leftovers_stopped", processes=[{"pid": p.pid, "command": p.command} for p in leftovers]
        )

    cut_off = node_id if checkpoint.phase != "finished" else None
    # the recheck is at the node the run goes on at, whichever of the two records names it
    at = cut_off or checkpoint.next or graph.start
    redirect = engine.recheck(at, "resume")
    if redirect is not None:
        current = (
            redirect  # the answer, if one was given, was for a tree that is not there any more
        )
    elif cut_off is None:
        current = at
    else:
        visits = checkpoint.visits
        visits[cut_off] = max(0, visits.get(cut_off, 1) - 1)  # it is entered again below
        node = graph.nodes[cut_off]
        if pending or reruns_on_resume(node):
            current = cut_off
            if pending and answer is not None:
                settings["answers"][pending["node"]] = answer
        else:
            assert isinstance(node, WorkNode), "only a work node is not run again"
            reason = node.interrupted_reason or (
                f"{cut_off} was interrupted mid-run and is not safe to re-run "
                "(rerun_on_resume: false); inspect the project and start a new run"
            )
            engine.fail_over(cut_off, "interrupted", reason)
            current = graph.failure_node
    engine.run.event("run_resumed", node=current, answered=answer is not None, was=status)
    return engine.drive(current)


def reruns_on_resume(node: Node) -> bool:
    """Whether a resume simply runs ``node`` again when the run was cut off
    while it ran (a work node's ``rerun_on_resume``; any other node asks or
    ends again)."""
    return not isinstance(node, WorkNode) or node.rerun_on_resume


class _Engine:
    def __init__(
        self,
        graph: Graph,
        run: RunDir,
        pm: Any,
        settings: dict[str, Any],
        config: Any,
        stage_runner: StageRunner,
        checkpoint: Checkpoint,
        before_node: BeforeNode | None = None,
    ):
        self.graph = graph
        self.run = run
        self.pm = pm
        self.settings = settings
        self.config = config
        self._stage_runner = stage_runner
        self._before_node = before_node
        self._append = frozenset(graph.append)
        self._may_set = {
            node.id: frozenset(node.state_keys()).union(ENGINE_KEYS)
            for node in graph.nodes.values()
            if isinstance(node, WorkNode)
        }
        self.cp = checkpoint
        self._session_start = time.monotonic()
        self._active_base = 0.0
        self._attempt = 0

    @property
    def state(self) -> dict[str, Any]:
        return self.cp.state

    # -- the loop --------------------------------------------------------------

    def drive(self, current: str) -> RunResult:
        self._active_base = self.cp.active_s
        self._session_start = time.monotonic()
        try:
            with stop_signals():
                while True:
                    node = self.graph.nodes[current]
                    if isinstance(node, EndNode):
                        redirect = (
                            self.recheck(node.id, "end")
                            if node.ending(self.state).exit_code == 0
                            else None
                        )
                        if redirect is None:
                            return self._end(node)
                        current = redirect
                        continue
                    failure = self._entry_failure(node)
                    if failure:
                        self.fail_over(current, *failure)
                        current = self.graph.failure_node
                        continue
                    try:
                        current = self._run_node(node)
                    except Paused as paused:
                        return self._pause(paused)
        except KeyboardInterrupt as exc:
            if self.cp.status in ("finished", "paused"):
                drop_held_signal()
                return self._result()  # the signal came after the run ended: its result stands
            signum = signal_number(exc)
            try:
                with held_signals():
                    self.cp.status = "interrupted"
                    self.save(durable=True)
                    self.run.event(
                        "interrupted",
                        node=self.cp.node,
                        phase=self.cp.phase,
                        signal=signal_label(signum),
                    )
            except StopSignal:
                pass  # a second signal: this one is stopping the run already
            raise RunInterrupted(
                self.run.run_id, str(self.settings.get("project_dir", ".")), signum
            ) from None
        finally:
            supervision.stop_background(str(self.run.path))  # nothing a run started outlives it
            self.run.close()

    def recheck(self, at: str, when: str) -> str | None:
        """Run the graph's ``recheck`` (``when``: ``resume`` or ``end``, at
        node ``at``); the node it sends the run to, with its updates applied
        and an edge and a ``recheck`` event recorded, or None."""
        fn = self.graph.recheck_function
        if fn is None:
            return None
        ctx = self._context(self.graph.nodes[at], self._usage())
        signals = signals_raised()
        try:
            result = fn(ctx, list(self.cp.path))
            if result is None:
                return None
            if not isinstance(result, Outcome) or result.route not in self.graph.nodes:
                raise _BadOutcome(
                    f"named no node of the graph: {getattr(result, 'route', result)!r}"
                )
            problem = self._model_problem("it", result.updates)
            if problem:
                raise _BadOutcome(problem)
        except Exception as exc:  # a broken recheck never ends a run as a success
            stopped = swallowed_signal(signals, exc)
            if stopped is not None:
                raise stopped from exc
            text = (
                str(exc)
                if isinstance(exc, _BadOutcome)
                else f"crashed: {type(exc).__name__}: {exc}"
            )
            reason = f"the graph's recheck ({self.graph.recheck}) {text}"
            if when == "resume":
                raise UsageError(f"run {self.run.run_id}: {reason}; nothing was run") from None
            self.fail_over(at, "failure", reason)
            return self.graph.failure_node
        target = result.route
        with held_signals():
            self._apply(result.updates, None)
            # the end node was not entered: the edge leaves the node that routed there
            source = self.cp.path[-1] if when == "end" and self.cp.path else at
            self.cp.edges.append([source, target, "recheck"])
            self.save()
        self.run.event("recheck", node=at, when=when, to=target, updates=_plain(result.updates))
        return target

    def _entry_failure(self, node: Node) -> tuple[str, str] | None:
        if self._remaining() <= 0:
            return "run timeout", f"run timed out after {_secs(self.graph.timeout)} s"
        visits = self.cp.visits.get(node.id, 0) + 1
        cap = self.graph.max_loop_iterations
        if visits > cap:
            return "loop cap", f"node {node.id} entered {visits} times (loop cap {cap})"
        return None

    def fail_over(self, node_id: str, key: str, reason: str) -> None:
        """An engine-level failure: record it and head for the failure node."""
        with held_signals():
            self.state["failure_reason"] = reason
            self.cp.edges.append([node_id, self.graph.failure_node, key])
        self.run.event("failure", node=node_id, reason=reason, to=self.graph.failure_node)

    def _enter(self, node: Node) -> float:
        """Announce that ``node`` starts; return its start time.  The
        checkpoint in memory says it started (what a stop signal or a pause
        saves); it is saved now only for a node that resume may not simply
        run again: for any other, the previous node's record (``next``) leads
        a resume to it all the same, its visit not yet counted there as it
        would be uncounted from its own."""
        cp = self.cp
        with held_signals():
            visit = cp.visits[node.id] = cp.visits.get(node.id, 0) + 1
            cp.node, cp.phase, cp.next, cp.status = node.id, "started", None, "running"
            if not reruns_on_resume(node):
                self.save(durable=True)
        self.run.event("node_started", node=node.id, kind=node.kind, visit=visit)
        self._notify(
            "stepkit_node_started",
            run_id=self.run.run_id,
            node=node.id,
            kind=node.kind,
            state=self.state,
        )
        return time.monotonic()

    def _run_node(self, node: ScriptNode | StageNode | ApprovalNode | InputNode) -> str:
        nid = node.id
        started = self._enter(node)
        if isinstance(node, AskNode):
            step = self._ask_node(node)
        else:
            step = self._call_node(node)
        duration = round(time.monotonic() - started, 4)
        with held_signals():
            self._apply(step.updates, step.usage)
            self.cp.path.append(nid)
            self.cp.edges.append([nid, step.target, step.key])
            self.cp.phase, self.cp.next = "finished", step.target
            self.save()
        event: dict[str, Any] = {
            "node": nid,
            "route": step.key,
            "to": step.target,
            "duration_s": duration,
        }
        if step.usage is not None and step.usage != Usage():
            event["tokens"] = step.usage.model_dump()
        if step.plugin:
            event["plugin"] = step.plugin
        self.run.event("node_finished", **event)
        self._notify(
            "stepkit_node_finished",
            run_id=self.run.run_id,
            node=nid,
            route=step.target,
            duration_s=duration,
            state=self.state,
        )
        return step.target

    # -- script and stage nodes -----------------------------------------------

    def _call_node(self, node: ScriptNode | StageNode) -> _Step:
        nid = node.id
        if isinstance(node, ScriptNode):
            call = node.function
            assert call is not None, "validating the graph imported every script node's call"
        else:
            runner = self._stage_runner
            stage = node.stage

            def call(ctx: StageContext) -> Outcome:
                return runner(stage, ctx)

        before = self._before_node

        def fn(ctx: StageContext) -> Outcome:
            if before is not None:
                before(node)
            return call(ctx)

        attempts = node.max_attempts or 1
        run_usage = self._usage()
        # each attempt starts at the run's usage so far (a budget is per run);
        # what the node spent, over all its attempts, is the usage since run_usage
        seed = run_usage
        for attempt in range(1, attempts + 1):
            ctx = self._context(node, seed)
            timeout, run_limited = self._timeout_for(node)
            is_fault, fault_updates = False, {}
            try:
                result = call_with_timeout(fn, ctx, timeout, nid)
                step = self._route(node, result)
                step.usage = ctx.usage.since(run_usage)
                return step
            except Paused:
                self._apply({}, ctx.usage.since(run_usage))
                raise
            except NodeTimeout:
                if run_limited:
                    reason = f"run timed out after {_secs(self.graph.timeout)} s"
                    self.run.event("failure", node=nid, reason=reason, to=self.graph.failure_node)
                    return _Step(
                        self.graph.failure_node,
                        "run timeout",
                        {"failure_reason": reason},
                        ctx.usage.since(run_usage),
                    )
                text = f"node {nid} timed out after {_secs(timeout)} s"
            except StageFault as fault:
                text, is_fault, fault_updates = fault.note, True, dict(fault.updates)
                problem = self._updates_problem(node, fault_updates)
                if problem:
                    text, fault_updates = f"{text} (its updates were not kept: {problem})", {}
            except _BadOutcome as exc:
                text = str(exc)
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - any crash is routed, never raised
                text = f"node {nid} crashed: {type(exc).__name__}: {exc}"
            seed = ctx.usage
            self.run.event("node_fault", node=nid, attempt=attempt, attempts=attempts, error=text)
        usage = seed.since(run_usage)
        updates = {**fault_updates, f"{nid}_fault": text, "last_fault_node": nid}
        updates["fault_note" if is_fault else "failure_reason"] = text
        if node.fallback:
            return _Step(node.fallback, "fallback", updates, usage)
        updates.setdefault("failure_reason", f"node {nid} faulted: {text}")
        return _Step(self.graph.failure_node, "failure", updates, usage)

    def _route(self, node: WorkNode, result: Any) -> _Step:
        if not isinstance(result, Outcome):
            raise _BadOutcome(f"node {node.id} returned {type(result).__name__}, not an Outcome")
        problem = self._updates_problem(node, result.updates)
        if problem:
            raise _BadOutcome(problem)
        expected = ", ".join(repr(k) for k in node.routes) or "none (it has only next)"
        if result.route is None:
            if node.next:
                return _Step(node.next, "next", result.updates)
            raise _BadOutcome(f"node {node.id} returned no route (expected one of: {expected})")
        if result.route in node.routes:
            return _Step(node.routes[result.route], result.route, result.updates)
        raise _BadOutcome(
            f"node {node.id} returned unknown route {result.route!r} (expected one of: {expected})"
        )

    def _updates_problem(self, node: WorkNode, updates: dict[str, Any]) -> str | None:
        """Why the graph cannot take these updates from ``node``, if it cannot:
        a key the node does not declare (its ``outputs``; the engine's own
        records are always allowed), or one value for an append field."""
        undeclared = [key for key in updates if key not in self._may_set[node.id]]
        if undeclared:
            return f"node {node.id} set {_keys(undeclared)}, which its outputs do not declare"
        not_lists = [
            key for key in self._append.intersection(updates) if not isinstance(updates[key], list)
        ]
        if not_lists:
            return (
                f"node {node.id} gave {_keys(not_lists)} as a single value; the graph appends to "
                "it, so the node returns a list of the new items"
            )
        return self._model_problem(f"node {node.id}", updates)

    def _model_problem(self, who: str, updates: dict[str, Any]) -> str | None:
        """Why the graph's state model refuses ``updates`` (a key it lacks, a
        value of the wrong type; an append field's value is its new items)."""
        model, ids = self.graph.state_model, self.graph.nodes.keys()
        for key, value in _plain(updates).items():
            problem = value_problem(model, key, value, ids)
            if problem:
                return f"{who} set {problem}"
        return None

    def _timeout_for(self, node: WorkNode) -> tuple[float, bool]:
        remaining = self._remaining()
        if node.timeout is not None and node.timeout < remaining:
            return node.timeout, False
        return remaining, True

    def _context(self, node: Node, usage: Usage) -> StageContext:
        """A node's context; ``usage`` is the run's usage before the node
        (the engine adds back only what the node spent, ``ctx.usage.since(usage)``)."""
        self._attempt += 1
        token = self._attempt

        def emit(kind: str, **fields: Any) -> None:
            if token == self._attempt:  # an abandoned (timed-out) attempt writes nothing
                self.run.event(kind, **{"node": node.id, **fields})
                if kind == "detached_stopped":
                    self._ended(node, fields["processes"])

        return StageContext(
            node=node.id,
            project_dir=Path(self.settings["project_dir"]),
            plans_dir=Path(self.settings["plans_dir"]),
            state=dict(self.state),
            settings=self.settings,
            config=self.config,
            pm=self.pm,
            run_dir=self.run.path,
            emit=emit,
            ask=lambda question: self._ask(question)[0],
            usage=usage,
        )

    # -- approval and input nodes --------------------------------------------

    def _ask(self, question: Question) -> tuple[str, str | None]:
        # the final approval is a person's: never a project-local plugin's
        without: Collection[str] = (
            getattr(self.pm, "local", set()) if self.graph.approves_the_step(question.node) else ()
        )
        answer, plugin = first_answer(
            self.pm, "stepkit_ask", without=without, question=question, settings=self.settings
        )
        if answer is None:
            raise Paused(question)
        (self.settings.get("answers") or {}).pop(question.node, None)  # an answer is used once
        self.run.event("answered", node=question.node, plugin=plugin)
        return str(answer), plugin

    def _ask_node(self, node: ApprovalNode | InputNode) -> _Step:
        nid = node.id
        question = question_for(node, self.state)
        signals = signals_raised()
        try:
            answer, plugin = self._ask(question)
        except Paused:
            raise
        except Exception as exc:  # a broken ask plugin ends the run visibly
            stopped = swallowed_signal(signals, exc)
            if stopped is not None:
                raise stopped from exc
            reason = f"node {nid} crashed: {type(exc).__name__}: {exc}"
            return _Step(
                self.graph.failure_node,
                "failure",
                {"failure_reason": reason, "last_fault_node": nid},
            )
        target, key, updates = answer_route(node, question, answer, self.state)
        return _Step(target, key, updates, plugin=plugin)

    def _pause(self, paused: Paused) -> RunResult:
        question = paused.question
        pending = pending_record(paused)
        output = guard_lines(
            pause_text(
                self.run.run_id,
                str(self.settings.get("project_dir", ".")),
                pending,
                short_run_id(self.run),
            ),
            self.graph.sentinels(),
            keep_first=True,
        )
        cp = self.cp
        with held_signals():
            cp.status, cp.pending, cp.outcome, cp.exit_code = (
                "paused",
                pending,
                "PAUSED",
                PAUSED_EXIT,
            )
            cp.output = output
            self.save(durable=True)
        self.run.event(
            "paused", node=question.node, question=question.text, options=question.options
        )
        self._notify(
            "stepkit_run_finished",
            run_id=self.run.run_id,
            outcome="PAUSED",
            exit_code=PAUSED_EXIT,
            output=output,
        )
        return self._result()

    # -- end nodes -------------------------------------------------------------

    def _end(self, node: EndNode) -> RunResult:
        nid = node.id
        ending = node.ending(self.state)
        sentinel = ending.sentinel
        started = self._enter(node)
        seed = self._usage()
        ctx = self._context(node, seed)
        signals = signals_raised()
        try:
            text = (
                str(ending.function(ctx))
                if ending.function
                else render_template(ending.output or "", self.state)
            )
        except Exception as exc:  # the sentinel is emitted whatever the renderer does
            stopped = swallowed_signal(signals, exc)
            if stopped is not None:
                raise stopped from exc
            problem = f"{type(exc).__name__}: {exc}"
            if nid != self.graph.failure_node:
                # what the renderer does (the step-runner's success marks the plan
                # complete) did not happen: the run did not end as this node says
                with held_signals():
                    self._apply({}, ctx.usage.since(seed))
                    self.fail_over(nid, "failure", f"node {nid} failed: {problem}")
                    self.state["last_fault_node"] = nid
                failure_node = self.graph.nodes[self.graph.failure_node]
                assert isinstance(failure_node, EndNode), "validating the graph held it to one"
                return self._end(failure_node)
            reason = self.state.get("failure_reason")
            text = f"(the output of {nid} could not be rendered: {problem})"
            if reason:
                text += f"\nReason: {reason}"
        if text.split("\n", 1)[0].strip() != sentinel:
            text = f"{sentinel}\n{text}" if text.strip() else sentinel
        # only the first line is an outcome, whatever the renderer put below it (a model's text)
        text = guard_lines(text, self.graph.sentinels(), keep_first=True)
        cp = self.cp
        with held_signals():
            self._apply({}, ctx.usage.since(seed))
            cp.path.append(nid)
            cp.status, cp.phase, cp.outcome, cp.exit_code = (
                "finished",
                "finished",
                sentinel,
                ending.exit_code,
            )
            cp.output, cp.finished_at = text, _now()
            # a --worktree run is complete once its commit exists: owed from this same write on
            cp.finishing = (
                "commit" if sentinel == COMMITS_AT and self.settings.get(WORKTREE) else None
            )
            self.run.write_output(text)
            self.save(durable=True)
        duration = round(time.monotonic() - started, 4)
        self.run.event("node_finished", node=nid, route=None, to=None, duration_s=duration)
        self.run.event("run_finished", outcome=sentinel, exit_code=ending.exit_code)
        prune_after_run(self.run.project)
        self._notify(
            "stepkit_node_finished",
            run_id=self.run.run_id,
            node=nid,
            route=None,
            duration_s=duration,
            state=self.state,
        )
        self._notify(
            "stepkit_run_finished",
            run_id=self.run.run_id,
            outcome=sentinel,
            exit_code=ending.exit_code,
            output=text,
        )
        return self._result()

    # -- bookkeeping -----------------------------------------------------------

    def _apply(self, updates: dict[str, Any], usage: Usage | None) -> None:
        """Merge ``updates`` into the state (the graph's ``append`` fields get
        the new items added) and add ``usage`` to the run's."""
        if updates:
            plain = _plain(updates)
            for key in self._append.intersection(plain):
                kept = self.state.get(key)
                plain[key] = [*(kept if isinstance(kept, list) else []), *plain[key]]
            self.state.update(plain)
        if usage is not None and usage != Usage():
            total = self._usage().add(usage)
            self.state["usage"] = total.model_dump()

    def _usage(self) -> Usage:
        """What the run spent so far."""
        return Usage.model_validate(self.state.get("usage") or {})

    def _ended(self, node: Node, processes: list[dict[str, Any]]) -> None:
        """Name the processes ``node`` left running that were ended in the
        state's ``processes_ended``, which the graph shows its user."""
        who = node.who or f"node {node.id}"
        lines = [
            f"a process {who} started outlived its node and was ended: {p['command']}"
            for p in processes
        ]
        # one assignment (called from the node's thread): a save never sees a list mid-append
        self.state["processes_ended"] = [*(self.state.get("processes_ended") or []), *lines]

    def _remaining(self) -> float:
        return self.graph.timeout - self._active_s()

    def _active_s(self) -> float:
        return self._active_base + (time.monotonic() - self._session_start)

    def save(self, durable: bool = False) -> None:
        """Write the checkpoint (its stored settings without secrets);
        ``durable``: on the disk before this returns (where the run is
        handed over, see the module docstring)."""
        # the live settings keep any secret a spec needs; the stored copy does not
        self.cp.settings = redacted(self.settings)
        self.cp.active_s = round(self._active_s(), 3)
        self.cp.updated_at = _now()
        self.run.save(self.cp, durable=durable)

    def _notify(self, hook: str, **kwargs: Any) -> None:
        try:
            getattr(self.pm.hook, hook)(**kwargs)
        except Exception as exc:  # noqa: BLE001 - an observer must not break the run
            self.run.event("observer_error", hook=hook, error=f"{type(exc).__name__}: {exc}")

    def _result(self) -> RunResult:
        cp = self.cp
        assert cp.outcome is not None and cp.exit_code is not None, "the run ended or paused"
        return RunResult(
            outcome=cp.outcome,
            exit_code=cp.exit_code,
            run_id=self.run.run_id,
            output=cp.output or "",
            state=cp.state,
            pending=cp.pending,
            run_dir=str(self.run.path),
        )


def _check_answer(run_id: str, pending: dict[str, Any], answer: str) -> None:
    """Refuse an answer that does not fit the question the run waits on,
    before anything of the run changes.

    :raises UsageError: naming what the question takes.
    """
    question = pending_question(pending)
    try:
        reading = read_answer(question, answer)
    except Rejected as refused:
        raise UsageError(
            f"--answer {answer}: {refused.note}; run {run_id} is still paused, nothing changed"
        ) from None
    if reading.view:
        raise UsageError(
            f"--answer {answer}: '{reading.route}' is no answer but something to look at, shown "
            f"at the question on a terminal (`stepkit resume {run_id}` there); "
            f"{expected(question)}; run {run_id} is still paused, nothing changed"
        )


def _plain(value: dict[str, Any]) -> dict[str, Any]:
    """Plain JSON data (what the checkpoint can hold and give back unchanged),
    with secrets masked: nothing unredacted ever enters the state."""
    return redacted(json.loads(json.dumps(value, default=jsonable)))


def _keys(keys: list[str]) -> str:
    return ", ".join(repr(key) for key in sorted(keys))


def _secs(value: float) -> str:
    return f"{value:g}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")
