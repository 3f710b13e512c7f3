"""Stage adapters: call a stage hook and apply the harness's mechanics around it.

The hooks (``stepkit_orient`` …) only produce results; the harness is what
makes the protocol's rules hold whatever a plugin or a model does:

- orient is read-only in fact: the tree is compared before and after;
- the step's scope snapshot is taken when the step starts, and after the
  coder the changed files, the diff, tamper flags are computed (against a
  snapshot held in memory for the round, whatever the coder does to the
  run store, which is itself flagged) and edits to the plan repo are
  undone, each displaced file kept, and recorded as a deviation; in a
  ``--worktree`` run, a change to the user's own tree meanwhile is flagged
  (:mod:`stepkit.protocol.watched`);
- the sweep's annotations are applied only as additions to the ``Edge cases``
  section of LATER step plans;
- the handoff file is rendered by the harness, with an Evidence section built
  from the recorded gates; NOTES.md is only appended to.

``run_stage(name, ctx)`` is what the graph's stage nodes, ``stepkit stage``
and :func:`stepkit.api.run_stage` call.  Rules about a stage (did the sweep
run?) find its nodes by stage name, through the run's ``stage_nodes``
setting (:func:`stage_nodes`), never by node id: any graph file may reuse
the stages under its own ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from stepkit.errors import describe_validation
from stepkit.graph.model import Graph
from stepkit.pluginmanager import first_answer
from stepkit.protocol.start import scope_path
from stepkit.protocol.state import StepState, step_state
from stepkit.protocol.watched import watched
from stepkit.records import (
    FAILED_STATUSES,
    CoderResult,
    GateResult,
    HandoffProse,
    OrientResult,
    Outcome,
    ReviewResult,
    StageContext,
    StageFault,
    SweepResult,
    TamperFlag,
    dumped,
    flag_lines,
    marked_findings,
)
from stepkit.workspace.evidence import last_line
from stepkit.workspace.files import atomic_write

#: The mark that opens a critical finding's line in a review given as text.


def run_stage(name: str, ctx: StageContext) -> Outcome:
    """Run the stage ``name`` (a key of :data:`STAGES`)."""
    try:
        stage = STAGES[name]
    except KeyError:
        raise StageFault(f"unknown stage {name!r} (known: {', '.join(sorted(STAGES))})") from None
    return stage.run(ctx)


def _answer(ctx: StageContext, name: str) -> tuple[Any, str]:
    """Call stage ``name``'s hook as its row of :data:`STAGES` says: the tree
    compared before and after for a read-only stage (a change is a fault,
    whichever plugin answered), the answer validated against the stage's
    result model (a model or a dict of its fields).

    :return: the validated result and the plugin that gave it.
    :raises StageFault: no plugin answered, the answer is invalid (naming
        the field), or a read-only stage changed the tree.
    """
    from stepkit.workspace.scope import changed_between, file_ids

    stage = STAGES[name]
    assert stage.hook is not None and stage.result is not None
    before = file_ids(ctx.project_dir) if stage.read_only else None
    data, plugin = first_answer(ctx.pm, stage.hook, ctx=ctx)
    if data is None:
        spec = ctx.settings.get(stage.delegate) if stage.delegate else None
        owner = (
            (
                f" for {stage.delegate} {spec!r} (check --{stage.delegate}; `stepkit plugins` lists who "
                "implements it)"
            )
            if spec
            else ""
        )
        raise StageFault(
            f"no plugin answered {stage.hook}{owner} (is the plugin that provides it disabled?)"
        )
    assert plugin is not None, "first_answer names the plugin of every answer"
    ctx.emit("hook_answered", hook=stage.hook, plugin=plugin)
    if before is not None:
        changed = changed_between(before, file_ids(ctx.project_dir))
        if changed:
            shown = ", ".join(changed[:10]) + (" …" if len(changed) > 10 else "")
            raise StageFault(
                f"{stage.title or name} is read-only but the project tree changed during it: "
                f"{shown}"
            )
    return _validated(stage.result, data, stage.hook), plugin


def _validated(model: type[BaseModel], data: Any, hook: str) -> Any:
    """``data`` as ``model``: a model instance is checked again (a plugin may
    have built it with ``model_construct``), a dict is validated."""
    try:
        return model.model_validate(
            data.model_dump(warnings=False) if isinstance(data, BaseModel) else data
        )
    except ValidationError as exc:
        raise StageFault(f"{hook} returned an invalid result: {describe_validation(exc)}") from None


# -- orient ------------------------------------------------------------------


def orient(ctx: StageContext) -> Outcome:
    """Mark the step in-progress (it really starts now), snapshot the scope,
    and run the read-only orientation; a change to the tree is a fault."""
    from stepkit.planrepo.edits import set_status

    plan_path = step_state(ctx).plan_path
    if plan_path and ctx.run_dir is not None:  # a stage run on its own changes no status
        set_status(Path(plan_path), "in-progress")
    snapshot = _save_scope_snapshot(ctx)
    _measure_start(ctx, snapshot.get("scope_snapshot_digest"))
    result, plugin = _answer(ctx, "orient")
    return Outcome(updates={**result.model_dump(), "orient_plugin": plugin, **snapshot})


def _measure_start(ctx: StageContext, digest: str | None) -> None:
    """Begin the measure of the step's start (its outcomes, beside the rest
    of the step) as soon as the start is snapshotted: the orientation reads
    only, so the scratch copy is built while it runs, and the coder's round
    does not wait for it.  Not when a gate's command cannot start here: the
    coder's round then ends the run before anything is measured
    (:func:`_check_start_commands`)."""
    from stepkit.protocol.start import start_measure
    from stepkit.workspace import scope
    from stepkit.workspace.precheck import start_faults

    path = scope_path(ctx)
    snapshot = scope.load_snapshot(path, digest) if path is not None and digest else None
    if snapshot is not None and not start_faults(ctx.settings, ctx.pm, Path(ctx.project_dir)):
        start_measure(ctx, snapshot)


# -- implement ---------------------------------------------------------------


@watched("the coder", every_hidden=True)
def implement(ctx: StageContext) -> Outcome:
    """Delegate to the coder; then the scope guard looks at what it did.

    What the guard compares with is out of the coder's reach: the step-start
    snapshot is loaded (checked against the digest in the state) and held in
    memory, with the bytes it kept, before the coder runs, and so is the copy
    of the plan repo; touching the run store meanwhile is a tamper flag."""
    from stepkit.workspace import scope

    state = step_state(ctx)
    if state.coder_result is None:  # the first coder round
        _check_start_commands(ctx)
    snapshot, updates = _step_snapshot(ctx)
    if snapshot is not None and state.coder_result is None:
        from stepkit.protocol.start import start_measure

        start_measure(ctx, snapshot)  # the start's outcomes, measured while the coder works
    watch = _run_store_watch(ctx)
    # The plan repo is restored to what it was just before THIS coder round:
    # the harness's own edits (handoff, NOTES.md, sweep annotations) stay.
    plan_before = scope.copy_plan_repo(ctx.project_dir, ctx.plans_dir)
    git_before = scope.git_internals(ctx.project_dir)
    trust_watch = _trust_store_watch(ctx)
    try:
        coder, plugin = _answer(ctx, "implement")
    finally:  # first, before any git call can run what the coder planted in .git/ (a bad answer too)
        git_flags = undo_git_edits(ctx, git_before, "coder")
    raised = [*git_flags, *_untrusted_plugin_flags(ctx, trust_watch)]
    touched = watch.changes() if watch else []
    updates.update(
        {
            "coder_result": coder.model_dump(),
            "coder_plugin": plugin,
            **undo_plan_edits(ctx, plan_before, "coder"),
        }
    )
    if touched:
        raised.append(TamperFlag.by("the coder", "run_store", scope.store_flag(touched)))
    # the run's events are kept; what judges the tree is raised again from this round's
    raised = [*updates.pop("tamper_flags", []), *raised]
    kept = [*(flag for flag in state.tamper_flags if not flag.of_the_tree), *raised]
    if snapshot is not None:
        changes = scope.step_changes(snapshot, ctx.project_dir)
        updates.update(changes._asdict(), tamper_flags=dumped([*changes.tamper_flags, *kept]))
        if touched:  # for a later resume: put back what the coder took away
            snapshot.persist(scope_path(ctx))
    elif raised:
        updates["tamper_flags"] = dumped(kept)
    if coder.crashed:
        raise StageFault(
            f"the coder crashed: {last_line(coder.text) or 'no output'}",
            updates={
                **updates,
                "failure_reason": "the coder crashed (never retried: the tree may be half-edited)",
            },
        )
    return Outcome(updates=updates)


def _check_start_commands(ctx: StageContext) -> None:
    """End the run before the coder's first call when a gate command chosen
    for the step cannot start here (:func:`~stepkit.workspace.precheck.start_faults`):
    an environment fault naming the gate, why, and the setting that fixes it.
    A ``gate_command_replaced`` event names each gate that runs its next
    candidate in the place of a detected command that cannot start.

    :raises StageFault: one gate's command or more cannot start.
    """
    from stepkit.protocol.envfault import environment_fault_reason
    from stepkit.workspace.gate_commands import start_replacements
    from stepkit.workspace.precheck import start_faults

    for replaced in start_replacements(ctx.settings):
        ctx.emit("gate_command_replaced", **replaced)
    faults = start_faults(ctx.settings, ctx.pm, Path(ctx.project_dir))
    if not faults:
        return
    for fault in faults:
        ctx.emit("gate_cannot_start", gate=fault.name, command=fault.command, why=fault.summary)
    reason = " ".join(environment_fault_reason(fault, ctx.pm) for fault in faults)
    raise StageFault(
        f"the {faults[0].name} gate's command cannot start here: {faults[0].summary}",
        updates={"failure_reason": f"{reason} (checked before the coder was called)"},
    )


def undo_git_edits(ctx: StageContext, before: Any, who: str) -> list[TamperFlag]:
    """Put back the hooks and command-running git config ``before`` (a
    :class:`~stepkit.workspace.scope.GitInternals`, None outside git) holds
    after ``who`` ran (``coder``, or a gate's name), keeping what is displaced
    under the run's ``displaced/<who>-git-<n>/``; the tamper flags, each
    saying who did it."""
    from stepkit.workspace import scope

    if before is None:
        return []
    texts = scope.undo_git_changes(before, _keep_dir(ctx, f"{who}-git"), ctx.project_dir)
    if who == "coder":
        return [TamperFlag.by("the coder", "git_internals", text) for text in texts]
    return [
        TamperFlag.by(f"the {who} gate", "git_internals", f"the {who} gate: {text}")
        for text in texts
    ]


def _trust_store_watch(ctx: StageContext) -> Any:
    """A watch on the project's plugin trust store (outside the project, but
    within reach of a coder running as the user)."""
    from stepkit.trust import TrustStore
    from stepkit.workspace import scope

    root = TrustStore(ctx.project_dir).root
    return scope.StoreWatch(ctx.project_dir, [root], [root])


def _untrusted_plugin_flags(ctx: StageContext, trust_watch: Any) -> list[TamperFlag]:
    """A flag for each local plugin (``stepconf.py``, a ``[tool.stepkit]
    plugins`` module) the next command would refuse to load, unless an
    earlier round raised it already, and one when the coder touched the
    trust store."""
    from stepkit.trust import untrusted_plugins

    raised = step_state(ctx).tamper_flags
    flags = [
        TamperFlag.of_stepkit(
            "untrusted_plugin",
            f"local plugin {line}: not loaded until the user trusts it (stepkit trust)",
        )
        for line in untrusted_plugins(ctx.project_dir)
    ]
    touched = trust_watch.changes()
    if touched:
        text = f"the coder touched stepkit's plugin trust store: {', '.join(touched[:5])}"
        flags.append(TamperFlag.by("the coder", "trust_store", text))
    return [flag for flag in flags if flag not in raised]


def undo_plan_edits(ctx: StageContext, before: Any, who: str) -> dict[str, Any]:
    """Put the plan repo back as ``before`` (a
    :class:`~stepkit.workspace.scope.PlanCopy`) holds it after ``who`` ran
    (``coder``, or a gate's name), keeping every file the restore removes or
    overwrites under the run's ``displaced/<who>-<n>/``.

    :return: the state updates: the deviation naming each undone path and
        where its copy is, appended to ``scope_deviations`` (none: untouched).
    """
    from stepkit.workspace import scope

    undone = scope.restore_plan_repo(before, _keep_dir(ctx, who))
    if not undone:
        return {}
    doer = "the coder" if who == "coder" else f"the {who} gate"
    deviation = f"{doer} edited the plan repo; undone by the harness: {', '.join(undone)}"
    return {"scope_deviations": [deviation]}


def _keep_dir(ctx: StageContext, who: str) -> Path:
    """``displaced/<who>-<n>`` of the stage's work dir, n the first one not
    taken: created only when the restore keeps something."""
    from stepkit.workspace.scope.putback import numbered_dir

    return numbered_dir(ctx.work_dir() / "displaced", who)


def _run_store_watch(ctx: StageContext) -> Any:
    """A watch on what the scope guard and the checkpoint read back (none outside a run)."""
    from stepkit.workspace import scope

    if ctx.run_dir is None:
        return None
    return scope.StoreWatch(ctx.project_dir, *scope.run_store_paths(ctx.project_dir, ctx.run_dir))


def _save_scope_snapshot(ctx: StageContext) -> dict[str, Any]:
    """Persist the step-start snapshot (unless an earlier attempt of this
    run did); the state keeps its digest."""
    from stepkit.workspace import scope

    path = scope_path(ctx)
    if path is None:
        return {}
    digest = scope.snapshot_digest(path) or _write_scope_snapshot(ctx, path)
    return {"scope_snapshot_digest": digest}


def _write_scope_snapshot(ctx: StageContext, path: Path) -> str:
    from stepkit.workspace import scope

    return scope.save_snapshot(scope.take_snapshot(ctx.project_dir, ctx.plans_dir), path)


def _step_snapshot(ctx: StageContext) -> tuple[Any, dict[str, Any]]:
    """The step-start snapshot held in memory, and state updates.  One that
    is missing, or is not the one the state's digest names, is retaken now,
    before the coder, and flagged when the state named one."""
    from stepkit.workspace import scope

    path = scope_path(ctx)
    if path is None:
        return None, {}
    digest = step_state(ctx).scope_snapshot_digest
    snapshot = scope.load_snapshot(path, digest)
    if snapshot is not None:
        return snapshot, {} if digest else {"scope_snapshot_digest": scope.snapshot_digest(path)}
    updates: dict[str, Any] = {"scope_snapshot_digest": _write_scope_snapshot(ctx, path)}
    if digest:
        shown = scope.shown_path(path, ctx.project_dir)
        flag = (
            f"the step-start scope snapshot ({shown}) was missing or altered before this coder "
            "round: retaken, so what changed before the round is not among the step's changes"
        )
        updates["tamper_flags"] = [TamperFlag.of_stepkit("run_store", flag)]
    return scope.load_snapshot(path, updates["scope_snapshot_digest"]), updates


# -- sweep -------------------------------------------------------------------


def sweep(ctx: StageContext) -> Outcome:
    """Edge-case sweep; annotations of LATER steps land only in their Edge cases."""
    from stepkit.planrepo.edits import append_edge_case
    from stepkit.workspace.localpaths import portable_text

    result, plugin = _answer(ctx, "sweep")
    later = {s.step: Path(s.path) for s in step_state(ctx).later_steps}
    applied, refused = [], []
    for note in result.annotations:
        path, text = later.get(note.step), portable_text(note.edge_case.strip(), ctx.project_dir)
        if path is None or not text:
            refused.append(note.model_dump())
            continue
        if append_edge_case(path, text):
            applied.append({"step": note.step, "edge_case": text})
    updates = result.model_dump(exclude={"annotations"})
    updates.update(
        {"applied_annotations": applied, "refused_annotations": refused, "sweep_plugin": plugin}
    )
    return Outcome(updates=updates)


# -- review ------------------------------------------------------------------


def review(ctx: StageContext) -> Outcome:
    """Independent review; a reviewer fault is a fault, never findings."""
    review_result, plugin = _answer(ctx, "review")
    if review_result.fault:
        raise StageFault(f"independent review did not run: {review_result.fault}")
    findings = review_result.findings
    if findings is None:  # a plugin that gave only the text
        findings = marked_findings(review_result.review_report)
    return Outcome(
        updates={
            "review_report": review_result.review_report,
            "review_findings": [finding.model_dump() for finding in findings],
            "review_plugin": plugin,
            f"{ctx.node}_fault": None,
        }
    )


# -- handoff -----------------------------------------------------------------


def handoff(ctx: StageContext) -> Outcome:
    """The model writes the prose; the harness renders the file and its
    Evidence, as a draft in the run dir (:func:`handoff_draft`): only the
    final approval puts a handoff in the plan repo."""
    from stepkit.planrepo.validation import incomplete_deviation
    from stepkit.protocol.handoff.notes import append_notes
    from stepkit.protocol.handoff.render import render_handoff
    from stepkit.workspace.localpaths import portable_text

    state = step_state(ctx)
    step = state.step
    if step is None:  # resolve_step sets it before the handoff
        raise StageFault("the handoff needs the step's number, which the run's state lacks")
    prose, plugin = _answer(ctx, "handoff")
    gates = state.gates
    criteria = _criteria_evidence(state, prose, gates)
    text = render_handoff(
        step=step,
        title=state.title,
        result=prose.result,
        prose=prose.model_dump(),
        gates=gates,
        faults=pipeline_faults(ctx),
        fix_history=state.fix_history,
        changed_files=state.changed_files,
        fix_attempts=state.fix_attempts,
        max_fix_attempts=state.max_fix_attempts,
        deviations=[
            *incomplete_deviation(state.incomplete_plan),
            *state.scope_deviations,
            *flag_lines(state.tamper_flags),
            *state.processes_ended,
        ],
        criteria=criteria["criteria_evidence"],
        open_critical=state.unresolved_critical,
        project=ctx.project_dir,
    )
    path = handoff_draft(ctx)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    if prose.notes_facts:
        facts = [portable_text(fact, ctx.project_dir) for fact in prose.notes_facts]
        append_notes(ctx.plans_dir / "NOTES.md", facts, step)
    return Outcome(
        updates={
            "step_summary": prose.step_summary,
            "handoff_result": prose.result,
            "handoff_draft": str(path),
            "handoff_plugin": plugin,
            "acceptance_criteria": criteria["acceptance_criteria"],
            "criteria_report": criteria["criteria_report"],
        }
    )


def handoff_draft(ctx: StageContext) -> Path:
    """Where the handoff stage writes the step's handoff: ``handoff/`` in the
    run's directory (outside a run, the ad-hoc one), named like its place in
    the plan repo."""
    return ctx.work_dir() / "handoff" / Path(step_state(ctx).handoff_path).name


def _criteria_evidence(
    state: StepState, prose: HandoffProse, gates: list[GateResult]
) -> dict[str, Any]:
    """The acceptance-criteria map the writer gave, the lines stepkit renders
    from it against the final tests gate, and that part of the Evidence."""
    from stepkit.protocol.criteria import (
        criteria_rows,
        final_tests_gate,
        plan_criteria,
        render_criteria,
    )

    criteria, gate = plan_criteria(state.plan_text), final_tests_gate(gates)
    return {
        "acceptance_criteria": [entry.model_dump() for entry in prose.acceptance_criteria],
        "criteria_report": criteria_rows(criteria, prose.acceptance_criteria, gate),
        "criteria_evidence": render_criteria(criteria, prose.acceptance_criteria, gate),
    }


def pipeline_faults(ctx: StageContext) -> list[str]:
    """PIPELINE-FAULT lines for the sweep and the review when they did not run."""
    from stepkit.protocol.handoff.render import REVIEW_FAULT, SWEEP_FAULT

    faults = []
    for stage, flag in (("sweep", SWEEP_FAULT), ("review", REVIEW_FAULT)):
        fault = stage_fault(ctx, stage)
        if fault:
            faults.append(f"{flag} ({fault})")
    return faults


def stage_fault(ctx: StageContext, stage: str) -> str | None:
    """Why ``stage`` did not run: the fault the engine recorded for a node
    running it (``<node id>_fault``), or None."""
    for node in (ctx.settings.get("stage_nodes") or {}).get(stage, ()):
        fault = ctx.state.get(f"{node}_fault")
        if fault:
            return str(fault)
    return None


def stage_nodes(graph: Graph) -> dict[str, list[str]]:
    """The ids of the graph's stage nodes by stage name, e.g. ``{"review":
    ["independent_review"]}``: a run's ``stage_nodes`` setting."""
    nodes: dict[str, list[str]] = {}
    for node in graph.nodes.values():
        if node.kind == "stage" and node.stage:
            nodes.setdefault(node.stage, []).append(node.id)
    return nodes


# -- verify ------------------------------------------------------------------


def verify(ctx: StageContext) -> Outcome:
    """All four gates in order (``stepkit stage verify``), with the run's commands in a run."""
    from stepkit.workspace.gate_commands import run_gate_plan
    from stepkit.workspace.gates import run_gates

    plan = run_gate_plan(ctx.settings, ctx.pm, ctx.project_dir, ctx.config)
    results = run_gates(ctx.pm, ctx.project_dir, ctx.config, ctx.log_dir(), plan=plan)
    return Outcome(updates={"gates": [r.model_dump() for r in results]})


@dataclass(frozen=True)
class Stage:
    """One stage of the protocol: everything the harness, ``stepkit stage``,
    the API and the graph loader need to know about it.

    :ivar name: what ``stepkit stage NAME`` and a graph's ``stage:`` call it.
    :ivar run: the adapter that calls the hook and applies the harness's mechanics.
    :ivar hook: the hookspec the stage calls (None: verify runs the gates itself).
    :ivar result: the model the hook's answer is validated against (a
        plugin may answer with the model or with a dict of its fields).
    :ivar read_only: the project tree must not change while the hook runs.
    :ivar calls_model: it calls a model: through the run's engine
        (``--engine``, whose credentials are checked before a command that
        runs the stage), or, for a stage with a ``delegate``, through the
        coder or reviewer its spec names.
    :ivar delegate: the setting naming who answers (``coder``, ``reviewer``):
        an unknown spec is refused before the command starts.
    :ivar locks: it holds the project's lock while it runs, so it never
        meets a live run (even a read-only stage would read a tree that a
        run's coder is changing).
    :ivar rerun_on_resume: a node running it may simply run again when an
        interrupted run resumes (false: the run fails instead; a graph may
        be stricter, never looser).
    :ivar reads_changes: it judges the step's changes; outside a run they
        are the work tree's against HEAD.
    :ivar effort: the reasoning effort its model call asks for by default
        (an engine that has the notion reads it; ``effort_<node>`` overrides).
    :ivar title: how fault notes name it (default: its name).
    :ivar failed: whether its result (the state updates it produced) is its
        own verdict of failure (``stepkit stage`` exits 1 then); None: never.
    """

    name: str
    run: Callable[[StageContext], Outcome]
    hook: str | None
    result: type[BaseModel] | None
    read_only: bool
    calls_model: bool
    delegate: str | None = None
    locks: bool = True
    rerun_on_resume: bool = True
    reads_changes: bool = False
    effort: str | None = None
    title: str | None = None
    failed: Callable[[dict[str, Any]], bool] | None = None


def _coder_did_not_complete(updates: dict[str, Any]) -> bool:
    return (updates.get("coder_result") or {}).get("sentinel") != "CODER_COMPLETE"


def _a_gate_failed(updates: dict[str, Any]) -> bool:
    return any(gate["status"] in FAILED_STATUSES for gate in updates.get("gates", []))


#: Every stage, in the order a step runs them.
STAGES: dict[str, Stage] = {
    stage.name: stage
    for stage in (
        Stage(
            "orient",
            orient,
            "stepkit_orient",
            OrientResult,
            read_only=True,
            calls_model=True,
            effort="high",
        ),
        Stage(
            "implement",
            implement,
            "stepkit_implement",
            CoderResult,
            read_only=False,
            calls_model=True,
            delegate="coder",
            rerun_on_resume=False,
            failed=_coder_did_not_complete,
        ),
        Stage(
            "verify", verify, None, None, read_only=False, calls_model=False, failed=_a_gate_failed
        ),
        Stage(
            "sweep",
            sweep,
            "stepkit_sweep",
            SweepResult,
            read_only=False,
            calls_model=True,
            reads_changes=True,
        ),
        Stage(
            "review",
            review,
            "stepkit_review",
            ReviewResult,
            read_only=True,
            calls_model=True,
            delegate="reviewer",
            reads_changes=True,
            effort="high",
            title="the independent review",
        ),
        Stage(
            "handoff",
            handoff,
            "stepkit_write_handoff",
            HandoffProse,
            read_only=False,
            calls_model=True,
        ),
    )
}


def stage_of(ctx: StageContext) -> Stage | None:
    """The stage that the node ``ctx.node`` runs, found through the run's
    ``stage_nodes`` setting (without one, a node named after its stage);
    None for a node that runs no stage."""
    for name, nodes in (ctx.settings.get("stage_nodes") or {}).items():
        if ctx.node in nodes and name in STAGES:
            return STAGES[name]
    return STAGES.get(ctx.node)
