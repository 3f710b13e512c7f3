"""The Python API: what the CLI calls, usable from any program.

``run_step`` runs one step through the step-runner graph (or another graph
file); ``resume_run`` continues a paused or interrupted run.  Both return a
:class:`RunResult`; ``RunResult.to_json()`` is the ``--json`` object of
``stepkit run`` / ``stepkit resume``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stepkit.config import resolve_project_dir
from stepkit.engine.interrupts import RunInterrupted
from stepkit.engine.lock import ProjectLock, project_lock
from stepkit.errors import UsageError
from stepkit.hookspecs import hookimpl
from stepkit.presets import presets
from stepkit.records import GateResult, RunResult

if (
    TYPE_CHECKING
):  # the run engine and the YAML reader are imported by the calls that use them, not by verify
    from stepkit.engine.driver import StageRunner

__all__ = [
    "RunInterrupted",
    "RunResult",
    "check_run",
    "detect_gates",
    "parse_answers",
    "parse_sets",
    "plan_status",
    "plugin_checks",
    "resume_run",
    "run_stage",
    "run_step",
    "verify",
]

#: The run setting that holds the stepkit entry points installed when the
#: run began: a resume loads no other (:func:`stepkit.pluginmanager.get_plugin_manager`).
ENTRY_POINTS_KEY = "entry_points"


def run_step(
    prompt: str | None = None,
    step: int | str | None = None,
    plans_dir: str | Path | None = None,
    project_dir: str | Path = ".",
    engine: str | None = None,
    coder: str | None = None,
    reviewer: str | None = None,
    graph: str | Path | None = None,
    sets: Mapping[str, Any] | Iterable[str] | None = None,
    answers: Mapping[str, str] | Iterable[str] | None = None,
    pm: Any = None,
    *,
    rerun: bool = False,
    allow_incomplete_plan: bool = False,
    options: Mapping[str, Any] | None = None,
    disabled_plugins: Iterable[str] = (),
    observers: Iterable[Any] = (),
    stage_runner: StageRunner | None = None,
    worktree: bool | None = None,
    merge: bool = False,
    worktree_base: str | None = None,
) -> RunResult:
    """Run one step of the plan through a graph and return how it ended.

    :param prompt: free text ("execute step 3" selects step 3 when ``step``
        is not given).
    :param step: a step number or ``next`` (default).
    :param plans_dir: the plan repo (default: the project's configured
        ``plans_dir``, ``plans``), relative to ``project_dir``.
    :param engine: LLM engine spec; ``coder``, ``reviewer``: their specs.
    :param graph: a graph YAML file (default: the built-in step-runner).
    :param sets: initial-state overrides, a mapping or ``KEY=VALUE`` strings.
    :param answers: pre-answers by node, a mapping or ``NODE=TEXT`` strings;
        only nodes marked ``pre_answer`` (gate_blocked, gate_deviation) take one.
    :param pm: a plugin manager (default: the project's).
    :param rerun: run the step even when it is already complete (its status,
        or its handoff's ``result: complete``) or waits in a paused run; its
        handoff is first moved into the run dir, and the run's output says where.
    :param allow_incomplete_plan: run the step even when its plan is
        incomplete (:func:`~stepkit.planrepo.quality.step_findings`); its
        handoff's Deviations say so, naming what was missing.
    :param options: plugin-added command-line options (for ``stepkit_configure``).
    :param disabled_plugins: names from ``-p no:NAME``.
    :param observers: plugin objects registered for this run (e.g. a display).
    :param stage_runner: runs stage nodes (default ``stepkit.protocol.stages.run_stage``).
    :param worktree: run the step in a git work tree of its own, on branch
        ``stepkit/<NN>-<slug>`` (see :mod:`stepkit.worktrees`); None: as the
        project's ``worktree`` setting says.
    :param merge: with ``worktree``, merge the branch into the user's
        current branch when the step completes and the merge is safe.
    :param worktree_base: the ref the branch starts from (default ``HEAD``).
    :raises UsageError: bad input, the step is already complete and
        ``rerun`` is not set, or its plan is incomplete and
        ``allow_incomplete_plan`` is not set; no run was started (exit 2).
    :raises ProjectBusy: another run, resume, stage or verify of the project
        is live (a :class:`UsageError`); no run was started.
    :raises GraphError: the graph is invalid; no run was started.
    :raises RunInterrupted: a stop signal (Ctrl-C, SIGTERM, SIGHUP); the run
        is saved as interrupted (its ``exit_code`` is 128 + the signal).
    """
    from stepkit.config import load_config
    from stepkit.engine.driver import start_run
    from stepkit.engine.runstore import RunStore
    from stepkit.planrepo.model import resolve_plans_dir
    from stepkit.planrepo.validation import valid_plan
    from stepkit.pluginmanager import entry_point_ids
    from stepkit.protocol.result import with_step_report
    from stepkit.protocol.settled import tools_settled
    from stepkit.workspace import sandbox
    from stepkit.workspace.gate_commands import (
        fingerprint_ahead,
        forget_fingerprint,
        start_commands,
        start_fingerprint,
    )
    from stepkit.workspace.scope import gitconfig
    from stepkit.worktrees.finish import finish_run

    project = resolve_project_dir(project_dir)
    fingerprint_ahead(None, project)
    sandbox.ask_ahead()
    config = load_config(project)
    plans = resolve_plans_dir(project, plans_dir, config.plans_dir)
    valid_plan(plans)
    if worktree or (worktree is None and config.worktree.default):
        from stepkit.worktrees.create import isolated

        with isolated(
            project, plans, _step_request(step), prompt or "", merge=merge, base=worktree_base
        ) as tree:
            return run_step(
                prompt,
                step,
                Path(tree.project) / tree.plans,
                tree.project,
                engine,
                coder,
                reviewer,
                graph,
                sets,
                answers,
                pm,
                rerun=rerun,
                allow_incomplete_plan=allow_incomplete_plan,
                options=options,
                disabled_plugins=disabled_plugins,
                observers=observers,
                stage_runner=stage_runner,
                worktree=False,
            )
    if merge or worktree_base:
        what = "--merge" if merge else "a worktree base"
        raise UsageError(f"{what} works only with --worktree (or the worktree = true setting)")
    the_graph, settings = _graph_settings(
        project,
        config,
        graph,
        prompt,
        step,
        plans_dir,
        engine,
        coder,
        reviewer,
        sets,
        answers,
        options,
    )
    settings.update(_worktree_setting(project))
    handoff, choice, incomplete = _resolve_up_front(
        the_graph, settings, rerun, project, allow_incomplete_plan
    )
    names_step = _LockNamesStep()
    observers = [*observers, names_step]
    pm = _plugin_manager(pm, project, config, disabled_plugins, observers)
    try:
        fingerprint_ahead(pm, project)
        _check_up_front(pm, config, settings, disabled_plugins)
        start_commands(settings, pm, project, config)
        start_fingerprint(settings, pm, project)
        settings[ENTRY_POINTS_KEY] = entry_point_ids()
        state = _initial_state(the_graph, settings)
        with project_lock(project, "run", step=settings["step"], naming=True) as names_step.lock:
            run = _new_run(RunStore(project))
            names_step.lock.name(run_id=run.run_id)
            _say_unconfined()
            _say_replaced(settings)
            if choice:
                state["step_choice"] = choice
            if incomplete:
                state["incomplete_plan"] = incomplete
            if handoff is not None:
                state["kept_handoff"] = str(_move_aside(handoff, run.path / "previous-handoff"))
            gitconfig.take(run.path / gitconfig.RUN_DIR_NAME, project)
            with gitconfig.pinned(run.path):
                return finish_run(
                    with_step_report(
                        start_run(
                            the_graph,
                            run,
                            pm,
                            settings,
                            config,
                            state,
                            stage_runner or _run_stage,
                            tools_settled(settings, pm, project),
                        )
                    ),
                    settings,
                    run=run,
                )
    finally:
        forget_fingerprint(settings)
        _unregister(pm, observers)


def check_run(
    project_dir: str | Path = ".",
    plans_dir: str | Path | None = None,
    engine: str | None = None,
    coder: str | None = None,
    reviewer: str | None = None,
    graph: str | Path | None = None,
    sets: Mapping[str, Any] | Iterable[str] | None = None,
    answers: Mapping[str, str] | Iterable[str] | None = None,
    pm: Any = None,
    *,
    options: Mapping[str, Any] | None = None,
    disabled_plugins: Iterable[str] = (),
    sandbox: bool = True,
) -> None:
    """What :func:`run_step` checks before it starts anything, whatever the
    step: the graph, the ``--set`` keys and ``--answer`` nodes, the plugins'
    own checks (an engine's spec and credentials), the coder, reviewer and
    engine specs, and (``sandbox``) that a run whose ``[sandbox] required``
    can confine its coder.  ``stepkit run --parallel`` asks once, before any
    step starts, so a bad option is one line and no run.

    :raises UsageError: one line; nothing was started.
    :raises GraphError: the graph is invalid.
    """
    from stepkit.config import load_config
    from stepkit.planrepo.validation import valid_plan

    project = resolve_project_dir(project_dir)
    config = load_config(project)
    _, settings = _graph_settings(
        project,
        config,
        graph,
        None,
        None,
        plans_dir,
        engine,
        coder,
        reviewer,
        sets,
        answers,
        options,
    )
    valid_plan(settings["plans_dir"])
    pm = _plugin_manager(pm, project, config, disabled_plugins, ())
    _check_up_front(pm, config, settings, disabled_plugins, sandbox=sandbox)


def plugin_checks(
    project_dir: str | Path = ".",
    plans_dir: str | Path | None = None,
    engine: str | None = None,
    coder: str | None = None,
    reviewer: str | None = None,
    pm: Any = None,
    *,
    disabled_plugins: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The checks the plugins add to ``stepkit doctor``
    (``stepkit_doctor_checks``) for the run these options would start, its
    settings resolved as :func:`check_run` resolves them: one dict per line,
    ``name``, ``status`` (``ok``, ``warn`` or ``fail``), ``text`` and ``fix``;
    the built-ins' first.

    :raises UsageError: the options are wrong (what :func:`check_run` says too).
    :raises PluginError: a plugin answered something that is not a list of checks.
    """
    from stepkit.config import load_config
    from stepkit.errors import PluginError, StepkitError

    project = resolve_project_dir(project_dir)
    config = load_config(project)
    _, settings = _graph_settings(
        project, config, None, None, None, plans_dir, engine, coder, reviewer, None, None, None
    )
    pm = _plugin_manager(pm, project, config, disabled_plugins, ())
    try:
        answers = pm.hook.stepkit_doctor_checks(settings=settings, presets=presets(pm))
    except StepkitError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken plugin is one line, not a traceback
        raise PluginError(f"stepkit_doctor_checks failed: {type(exc).__name__}: {exc}") from None
    checks: list[dict[str, Any]] = []
    for answer in reversed(answers):
        for check in answer or []:
            if not (
                isinstance(check, dict)
                and check.get("status") in ("ok", "warn", "fail")
                and all(isinstance(check.get(key), str) for key in ("name", "text"))
            ):
                raise PluginError(
                    f"stepkit_doctor_checks: a check must be a dict of name, status "
                    f"(ok, warn or fail) and text, not {check!r:.200}"
                )
            checks.append({"fix": "", **check})
    return checks


def _graph_settings(
    project: Path,
    config: Any,
    graph: str | Path | None,
    prompt: str | None,
    step: int | str | None,
    plans_dir: str | Path | None,
    engine: str | None,
    coder: str | None,
    reviewer: str | None,
    sets: Mapping[str, Any] | Iterable[str] | None,
    answers: Mapping[str, str] | Iterable[str] | None,
    options: Mapping[str, Any] | None,
) -> tuple[Any, dict[str, Any]]:
    """The run's graph and its settings (:func:`_settings`), ``sets`` and
    ``answers`` checked against the graph.

    :raises UsageError: a bad ``--set`` or ``--answer``, or ``step``.
    :raises GraphError: the graph is invalid."""
    the_graph = _load_graph(graph, config)
    initial = parse_sets(sets, the_graph)
    stages = [node.stage for node in the_graph.nodes.values() if node.kind == "stage"]
    return the_graph, _settings(
        project,
        config,
        the_graph,
        prompt,
        step,
        plans_dir,
        engine,
        coder,
        reviewer,
        initial,
        parse_answers(answers, the_graph),
        options,
        stages,
    )


def _resolve_up_front(
    graph: Any, settings: dict[str, Any], rerun: bool, project: Path, allow_incomplete: bool
) -> tuple[Path | None, str, list[str]]:
    """Resolve the step as the graph's resolve_step node will, before any run
    starts: a step that cannot be resolved is a usage error, and so is a run
    of a step that is already done or waits in a paused or interrupted run
    (:class:`~stepkit.planrepo.stepstate.StepStates`), unless ``rerun``,
    and so is a step whose plan is incomplete, unless ``allow_incomplete``
    (:func:`~stepkit.planrepo.validation.incomplete_step`).  Returns the
    handoff file a rerun moves aside (None: there is none), why this step
    was chosen and what its plan lacks (empty: nothing); a graph without
    resolve_step is not checked.

    :raises UsageError: no plan repo, no such step, its plan cannot be read,
        no step left to run, the step is complete, paused or interrupted
        and ``rerun`` is not set, or its plan is incomplete and
        ``allow_incomplete`` is not set.
    """
    from stepkit.engine.pause import last_runs
    from stepkit.errors import PlanError
    from stepkit.planrepo.model import PlanRepo
    from stepkit.planrepo.stepstate import TO_DO, StepStates
    from stepkit.planrepo.validation import incomplete_step
    from stepkit.protocol.nodes import routes
    from stepkit.workspace.store import runs_dir
    from stepkit.worktrees.create import refuse_owing_step

    # the protocol's own resolve_step (a graph may reuse it; a test may stand in for it)
    if not any(
        node.kind == "script"
        and getattr(node.function, "__module__", None) == routes.__name__
        and getattr(node.function, "__name__", None) == "resolve_step"
        for node in graph.nodes.values()
    ):
        return None, "", []
    try:
        repo = PlanRepo.load(settings["plans_dir"])
        step, why = repo.choose(settings["step"], settings["prompt"])
    except PlanError as exc:
        raise UsageError(f"{exc}; no run was started") from None
    standing = StepStates(repo, last_runs(runs_dir(project))).of(step)
    if standing.state not in TO_DO and not rerun:
        if standing.state == "complete":
            raise UsageError(
                f"step {step.number} ({step.title}) is already complete ({standing.why}): "
                "it is not run again unless you pass --rerun"
            )
        raise UsageError(
            f"step {step.number} ({step.title}) is {standing.state}: {standing.why}; "
            "it is not started again unless you pass --rerun"
        )
    refuse_owing_step(project, step.number)
    incomplete = incomplete_step(repo, step, allow_incomplete)
    path = repo.handoff_path(step)
    return (path if rerun and path.is_file() else None), why, incomplete


def _move_aside(path: Path, directory: Path) -> Path:
    """``path`` moved into ``directory`` (created), bytes and times kept: a
    rerun's previous handoff, so the plan repo holds no approved handoff of
    a step being run again."""
    import shutil

    directory.mkdir(parents=True, exist_ok=True)
    return Path(shutil.move(path, directory / path.name))


def resume_run(
    run_id: str | None = None,
    answer: str | None = None,
    project_dir: str | Path = ".",
    pm: Any = None,
    *,
    disabled_plugins: Iterable[str] = (),
    observers: Iterable[Any] = (),
    observers_of: Callable[[Any], Iterable[Any]] | None = None,
    stage_runner: StageRunner | None = None,
    merge: bool | None = None,
) -> RunResult:
    """Continue a paused or interrupted run from its checkpoint, or finish a
    ``--worktree`` run stopped after its approval, before its commit or
    merge was made (nothing of its graph runs again).

    :param run_id: the run (default: the latest unfinished one, unless
        several paused runs are of different steps), in the project's run
        store or in that of one of its repository's stepkit work trees.
    :param answer: the answer to the question it paused at.
    :param merge: for a ``--worktree`` run, whether a completed step's
        branch is merged (None: as the run was started).
    :param observers_of: given the resume's plugin manager, once built,
        more observers to register (the CLI's display, which the plugins
        the run loads give): a resume builds its manager only once it has
        found its run, since it loads only the entry points the run began with.
    :raises UsageError: no such run, it finished, ``answer`` was given to
        a run that is not waiting for one, no ``run_id`` was given and
        paused runs of different steps wait (they are named), or the
        checkpoint does not fit the graph's state (nothing was run).
    :raises ProjectBusy: another command of the project is live (this run
        included), a :class:`UsageError`.
    :raises RunInterrupted: a stop signal again.
    """
    from stepkit.config import load_config
    from stepkit.engine.driver import resume_run as resume
    from stepkit.engine.runstore import RunStore
    from stepkit.protocol.result import with_step_report
    from stepkit.protocol.settled import tools_settled
    from stepkit.workspace import sandbox
    from stepkit.workspace.scope import gitconfig
    from stepkit.worktrees.finish import finish_run
    from stepkit.worktrees.runs import run_project

    project = run_project(resolve_project_dir(project_dir), run_id)
    sandbox.ask_ahead()
    store = RunStore(project)
    with project_lock(project, "resume", naming=True) as lock:
        run = store.open(run_id) if run_id else _only_unfinished_run(store)
        checkpoint = run.load()  # its paths in this project, wherever the run started
        lock.name(run_id=run.run_id, step=checkpoint.state.get("step"))
        if checkpoint.status == "finished" and checkpoint.finishing:
            return _finish_owed(run, checkpoint, answer, merge)
        config = load_config(project)
        the_graph = _load_graph(checkpoint.graph, config)
        recorded = checkpoint.settings.get(ENTRY_POINTS_KEY)
        pm = _plugin_manager(
            pm,
            project,
            config,
            disabled_plugins,
            (),
            recorded if isinstance(recorded, list) else None,
        )
        observers = [*observers, *(observers_of(pm) if observers_of else ())]
        _register(pm, observers)
        try:
            # what a run checks before it starts holds again before it goes on: the coder,
            # reviewer and engine specs, their plugins, the engine's credentials if a stage left calls it
            ahead = _stages_ahead(the_graph, checkpoint.node or the_graph.start)
            _check_up_front(pm, config, {**checkpoint.settings, "stages": ahead}, disabled_plugins)
            _say_unconfined()
            with gitconfig.pinned(run.path):
                result = finish_run(
                    with_step_report(
                        resume(
                            the_graph,
                            run,
                            pm,
                            config,
                            checkpoint,
                            answer,
                            stage_runner or _run_stage,
                            tools_settled(checkpoint.settings, pm, project),
                        )
                    ),
                    checkpoint.settings,
                    merge,
                    run,
                )
        finally:
            _unregister(pm, observers)
    return result


def _finish_owed(run: Any, checkpoint: Any, answer: str | None, merge: bool | None) -> RunResult:
    """A run that ended approved but was stopped before its commit (or
    merge) was made: that much done now, nothing of the graph run again.

    :raises UsageError: ``answer`` was given (the run asks nothing)."""
    from stepkit.protocol.result import with_step_report
    from stepkit.worktrees.finish import finish_run

    if answer is not None:
        raise UsageError(
            f"run {run.run_id} is not waiting for an answer (it was approved; its "
            f"{checkpoint.finishing} is owed); resume it without --answer"
        )
    result = RunResult(
        outcome=checkpoint.outcome or "",
        exit_code=checkpoint.exit_code or 0,
        run_id=run.run_id,
        output=checkpoint.output or "",
        state=checkpoint.state,
        run_dir=str(run.path),
    )
    return finish_run(with_step_report(result), checkpoint.settings, merge, run)


def _only_unfinished_run(store: Any) -> Any:
    """The run ``stepkit resume`` without a run id continues: the latest
    unfinished one, but never a guess among paused runs of different steps.

    :raises UsageError: naming the paused runs, when they are of different steps."""
    from stepkit.engine.pause import mixed_steps, paused_runs

    refusal = mixed_steps(paused_runs(store.runs))
    if refusal:
        raise UsageError(refusal)
    return store.latest_unfinished()


def parse_sets(sets: Mapping[str, Any] | Iterable[str] | None, graph: Any = None) -> dict[str, Any]:
    """``KEY=VALUE`` strings (values read as YAML: ``3`` is a number) or a mapping;
    with ``graph``, checked against its tunables (:mod:`stepkit.tunables`).

    :raises UsageError: a malformed entry, an unknown key, a value of the
        wrong type or range, or a key that is the run's own state.
    """
    if sets is None:
        return {}
    if isinstance(sets, Mapping):
        values = dict(sets)
    else:
        values = _parse_set_strings(sets)
    if graph is None:
        return values
    from stepkit.tunables import check_sets

    return check_sets(values, graph)


def _parse_set_strings(sets: Iterable[str]) -> dict[str, Any]:
    import yaml

    from stepkit.yamltext import load_yaml

    result: dict[str, Any] = {}
    for item in sets:
        key, sep, raw = str(item).partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise UsageError(
                f"--set {item}: expected KEY=VALUE with KEY a name (e.g. max_fix_attempts=3)"
            )
        try:
            result[key] = load_yaml(raw) if raw.strip() else ""
        except yaml.YAMLError:
            raise UsageError(f"--set {item}: the value is not valid YAML") from None
    return result


def parse_answers(answers: Mapping[str, str] | Iterable[str] | None, graph: Any) -> dict[str, str]:
    """``NODE=TEXT`` strings or a mapping, checked against the graph: only
    approval/input nodes marked ``pre_answer`` take an answer before their
    question is shown.

    :raises UsageError: a malformed entry, an unknown node, or a node that
        cannot be pre-answered (the final approval gate).
    """
    from stepkit.engine.answers import Rejected, read_answer
    from stepkit.engine.asking import question_for

    if answers is None:
        return {}
    pairs = list(answers.items()) if isinstance(answers, Mapping) else []
    if not isinstance(answers, Mapping):
        for item in answers:
            node, sep, text = str(item).partition("=")
            if not sep or not node.strip():
                raise UsageError(
                    f"--answer {item}: expected NODE=TEXT (e.g. gate_deviation=proceed)"
                )
            pairs.append((node.strip(), text))
    allowed = [
        n.id for n in graph.nodes.values() if n.kind in ("approval", "input") and n.pre_answer
    ]
    result = {}
    for node_id, text in pairs:
        node = graph.nodes.get(node_id)
        if node is None or node.kind not in ("approval", "input"):
            raise UsageError(
                f"--answer {node_id}=…: no approval or input node '{node_id}' in graph "
                f"{graph.name} (pre-answerable: {', '.join(allowed) or 'none'})"
            )
        if not node.pre_answer:
            what = (
                "the final approval gate" if graph.approves_the_step(node_id) else f"node {node_id}"
            )
            raise UsageError(
                f"--answer {node_id}=…: {what} can only be answered after its question is "
                f"shown (pre-answerable: {', '.join(allowed) or 'none'})"
            )
        try:
            if node.kind == "approval":  # an input's answer is its node's to refuse
                read_answer(question_for(node, {}), str(text))
        except Rejected as refused:
            raise UsageError(f"--answer {node_id}={text}: {refused.note}") from None
        result[node_id] = str(text)
    return result


def run_stage(
    name: str,
    step: int | str | None = None,
    prompt: str | None = None,
    plans_dir: str | Path | None = None,
    project_dir: str | Path = ".",
    engine: str | None = None,
    coder: str | None = None,
    reviewer: str | None = None,
    sets: Mapping[str, Any] | Iterable[str] | None = None,
    pm: Any = None,
    *,
    disabled_plugins: Iterable[str] = (),
) -> dict[str, Any]:
    """Run one protocol stage on its own, outside the step-runner graph.

    The step is resolved as ``stepkit run`` would; the stage then runs through
    the same hook and harness mechanics as in a run (orient must not write,
    sweep annotations only into later plans' Edge cases, the handoff is
    rendered by the harness), except what belongs to a run: the plan status
    is not changed and there is no step-start snapshot.  For ``sweep`` and
    ``review`` the step's changes are the git work tree against HEAD, seen as
    a run sees them: the plan repo left out, tamper flags raised.

    :param name: a stage of :data:`stepkit.protocol.stages.STAGES` (``orient``,
        ``implement``, ``verify``, ``sweep``, ``review``, ``handoff``); one whose
        row says it locks holds the project lock while it runs.
    :return: the stage's result (the state updates it produced).
    :raises UsageError: bad input, the step cannot be resolved, or the stage
        needs a human answer that cannot be given here.
    :raises ProjectBusy: another command of the project is live (a
        :class:`UsageError`); the stage did not run.
    :raises StageFault: the stage could not produce its result.
    """
    from stepkit.config import load_config
    from stepkit.planrepo.validation import valid_plan
    from stepkit.protocol.nodes.routes import resolve_step
    from stepkit.protocol.stages import STAGES
    from stepkit.protocol.stages import run_stage as run_one
    from stepkit.records import Paused, StageContext, StageFault
    from stepkit.workspace.store import adhoc_dir

    if name not in STAGES:
        raise UsageError(f"unknown stage {name!r} (known: {', '.join(sorted(STAGES))})")
    project = resolve_project_dir(project_dir)
    config = load_config(project)
    the_graph = _load_graph(None, config)
    initial = parse_sets(sets, the_graph)
    settings = _settings(
        project,
        config,
        the_graph,
        prompt,
        step,
        plans_dir,
        engine,
        coder,
        reviewer,
        initial,
        {},
        None,
        [name],
    )
    valid_plan(settings["plans_dir"])
    pm = _plugin_manager(pm, project, config, disabled_plugins, ())
    _check_up_front(pm, config, settings, disabled_plugins)
    state = _initial_state(the_graph, settings)

    def context(node: str) -> StageContext:
        return StageContext(
            node=node,
            project_dir=project,
            plans_dir=Path(settings["plans_dir"]),
            state=dict(state),
            settings=settings,
            config=config,
            pm=pm,
            ask=ask,
            adhoc_dir=adhoc_dir(project),
        )

    def ask(question: Any) -> str:
        from stepkit.pluginmanager import first_answer

        try:
            answer, _ = first_answer(pm, "stepkit_ask", question=question, settings=settings)
        except Paused:
            raise UsageError(
                f"stage {name} needs an answer at {question.node} ({question.text.splitlines()[0]}); "
                "run it on a terminal"
            ) from None
        return str(answer or "")

    resolved = resolve_step(context("resolve_step"))
    if resolved.route == "error":
        raise UsageError(resolved.updates["failure_reason"])
    state.update(resolved.updates)
    stage = STAGES[name]
    if stage.reads_changes:
        from stepkit.workspace.scope import working_tree_changes

        state.update(working_tree_changes(project, Path(settings["plans_dir"]))._asdict())
    try:
        with _stage_lock(project, stage, state.get("step")):
            # the node the step-runner runs the stage at (the scripted engine and
            # model_<node> settings key on it); verify is no stage node there
            node = (settings["stage_nodes"].get(name) or [name])[0]
            outcome = run_one(name, context(node))
    except StageFault as fault:
        raise UsageError(f"stage {name} failed: {fault.note}") from None
    return outcome.updates


def _stage_lock(project: Path, stage: Any, step: Any) -> AbstractContextManager[Any]:
    """The project's lock, taken for a stage whose row of
    :data:`stepkit.protocol.stages.STAGES` says it locks; nothing for the others.

    :raises ProjectBusy: another command of the project is live.
    """
    return project_lock(project, f"stage {stage.name}", step=step) if stage.locks else nullcontext()


def verify(
    project_dir: str | Path = ".",
    pm: Any = None,
    *,
    disabled_plugins: Iterable[str] = (),
    on_start: Callable[[str, str | None], None] | None = None,
    on_gate: Callable[[GateResult], None] | None = None,
    baseline: str | None = None,
    fix: bool = False,
    all_files: bool = False,
) -> dict[str, Any]:
    """Run the format, lint, build and test gates; return ``stepkit verify
    --json``'s object: ``ok`` (every gate that ran passed and the tests gate
    ran a test), ``project_type``,
    ``gates``.  ``on_start(gate, command)`` / ``on_gate(result)`` see each gate.

    The formatter runs in its check mode and rewrites nothing, unless ``fix``;
    its ``{files}`` are the work tree's changes against HEAD, or with
    ``all_files`` every file of the project (``pre-commit run --all-files``'s).

    :param baseline: a git ref: a failing gate is judged against the same
        command on that commit (pre-existing failures listed, not failing,
        under the default ``baseline = "new-failures"``; ``off`` in the
        project's settings counts as the default when a ref is given).
    :raises ProjectBusy: a run or another verify of the project is live.
    :raises UsageError: ``baseline`` names no commit of the project's repository."""
    from stepkit.pluginmanager import project_config
    from stepkit.workspace import headstart
    from stepkit.workspace.files import new_stamped_dir
    from stepkit.workspace.gate_commands import check_mode, plan_gates, project_types
    from stepkit.workspace.gates import run_gates
    from stepkit.workspace.scope.diff import project_files

    project = resolve_project_dir(project_dir)
    config = project_config(pm, project)
    pm = _plugin_manager(pm, project, config, disabled_plugins, ())
    base = None
    if baseline is not None:
        from stepkit.workspace.baseline import ref_tree

        base = ref_tree(project, baseline)
        if config.baseline == "off":
            config = config.model_copy(update={"baseline": "new-failures"})
    from stepkit.workspace.store import verify_dir

    with project_lock(project, "verify") as lock:
        logs = headstart.claim_logs(verify_dir(project)) or (
            new_stamped_dir(verify_dir(project)) / "logs"
        )
        plan = plan_gates(pm, project, config)
        plan = plan if fix else check_mode(plan, pm, project, config)
        # the project as its gates were chosen for; found here, while a head start's
        # gates run, not after the last one
        types, unsupported = project_types(pm, project), _unsupported(pm, project)
        with headstart.window():
            results = run_gates(
                pm,
                project,
                config,
                logs,
                on_start=on_start,
                on_gate=on_gate,
                plan=plan,
                baseline=base,
                change_set=(lambda: project_files(project, project / config.plans_dir))
                if all_files
                else None,
            )
        if base is None:  # a judged verify re-runs commands on another tree: never replayed
            headstart.save(project, lock.lock_file, logs)
    return {
        # a tests gate that ran no test is no evidence that the project passes, as in a run
        "ok": not any(r.failed or (r.name == "tests" and r.status == "not_run") for r in results),
        "project_type": types[0] if types else None,
        "gates": [r.public() for r in results],
        "unsupported": unsupported,
    }


def detect_gates(
    project_dir: str | Path = ".", pm: Any = None, *, disabled_plugins: Iterable[str] = ()
) -> dict[str, Any]:
    """Each gate's command and the plugin that chose it, without running anything
    (``stepkit detect --json``'s object)."""
    from stepkit.config import load_config
    from stepkit.workspace.gate_commands import (
        candidates,
        gate_fault,
        gate_source,
        project_types,
        resolve_commands,
    )
    from stepkit.workspace.toolpath import tool_dirs

    project = resolve_project_dir(project_dir)
    config = load_config(project)
    pm = _plugin_manager(pm, project, config, disabled_plugins, ())
    gates = [
        {
            "name": gate,
            "command": command,
            "plugin": plugin,
            "source": gate_source(pm, gate, command, project),
            "fault": gate_fault(pm, gate, command, project) or None,
            # what takes the command's place, in order, where it cannot run
            "candidates": [
                {
                    "command": other,
                    "plugin": by,
                    "source": gate_source(pm, gate, other, project),
                }
                for other, by in candidates(pm, gate, project, config)[1:]
            ]
            if command
            else [],
        }
        for gate, (command, plugin) in resolve_commands(pm, project, config).items()
    ]
    notes = [
        note
        for answer in pm.hook.stepkit_detect_notes(project_dir=project)
        for note in answer or ()
    ]
    return {
        "project_dir": str(project),
        "project_types": project_types(pm, project),
        "gates": gates,
        "tool_dirs": tool_dirs(pm, project),
        "notes": notes,
        "load_errors": dict(pm.load_errors),
        "unsupported": _unsupported(pm, project),
        "order": pm.hook.stepkit_gate_order(project_dir=project),
    }


def prove_gates(
    project_dir: str | Path = ".",
    pm: Any = None,
    *,
    disabled_plugins: Iterable[str] = (),
    on_gate: Any = None,
    choose: Any = None,
) -> Any:
    """Run each gate's chosen command once on the project's HEAD, in a
    scratch copy, the next candidate in the place of one that could not run
    (``stepkit init``: :func:`~stepkit.workspace.proof.prove_on_head`).

    :param on_gate: told each gate's result as soon as it ran.
    :param choose: asked about a gate none of whose candidates ran (None: never).
    :return: the :class:`~stepkit.workspace.proof.Proof`: the records, the
        commands that ran, the candidates passed over and why.
    """
    from stepkit.config import load_config
    from stepkit.workspace.proof import prove_on_head

    project = resolve_project_dir(project_dir)
    config = load_config(project)
    pm = _plugin_manager(pm, project, config, disabled_plugins, ())
    return prove_on_head(pm, project, config, on_gate or (lambda result: None), choose)


def _unsupported(pm: Any, project: Path) -> list[str]:
    """The build systems no plugin gives gates for (``stepkit_unsupported_build_systems``)."""
    return [
        name
        for answer in pm.hook.stepkit_unsupported_build_systems(project_dir=project)
        for name in answer or ()
    ]


def plan_status(
    project_dir: str | Path = ".", plans_dir: str | Path | None = None
) -> dict[str, Any]:
    """The plan repo's steps, dependencies and problems, and the project's
    paused runs with their age, and its steps in work trees and on unmerged
    ``stepkit/`` branches (``stepkit status --json``'s object)."""
    from stepkit.config import load_config
    from stepkit.engine.pause import last_runs, paused_runs
    from stepkit.engine.runstore import RunStore
    from stepkit.planrepo.model import PlanRepo, resolve_plans_dir
    from stepkit.planrepo.status import status_report
    from stepkit.workspace.store import store_report
    from stepkit.worktrees.listing import worktree_status

    project = resolve_project_dir(project_dir)
    plans = resolve_plans_dir(project, plans_dir, load_config(project).plans_dir)
    return {
        **status_report(PlanRepo.load(plans), last_runs(RunStore(project).runs)),
        "paused_runs": paused_runs(RunStore(project).runs),
        **store_report(project),
        **worktree_status(project, plans),
    }


def draft_plan(
    spec: str,
    plans_dir: str | Path | None = None,
    project_dir: str | Path = ".",
    engine: str | None = None,
    append: bool = False,
    pm: Any = None,
    *,
    disabled_plugins: Iterable[str] = (),
) -> tuple[Any, Any]:
    """Draft a plan's steps from ``spec`` through the engine (``stepkit plan``),
    checked, not written.

    The engine is asked at the node ``plan`` (``stepkit_draft_plan``); a
    draft with problems (:meth:`~stepkit.planrepo.drafted.Target.problems`)
    is asked for once more with them, then refused.

    :param append: the draft goes after the plan's existing steps; without
        it a plan that has steps is refused before the engine is asked.
    :return: the :class:`~stepkit.planrepo.draft.PlanDraft` and the
        :class:`~stepkit.planrepo.drafted.Target` that writes it.
    :raises UsageError: an empty spec, steps already there without
        ``append``, an engine that cannot be called, or a draft still
        invalid when asked again (naming its first problem).
    :raises ModelFault: the engine gave no draft (exit 1).
    """
    from pydantic import ValidationError

    from stepkit.config import load_config
    from stepkit.errors import ModelFault, describe_validation
    from stepkit.planrepo.draft import PlanDraft
    from stepkit.planrepo.drafted import Target
    from stepkit.planrepo.model import PlanRepo, resolve_plans_dir
    from stepkit.records import StageContext, StageFault
    from stepkit.workspace.store import adhoc_dir

    project = resolve_project_dir(project_dir)
    config = load_config(project)
    target = Target.of(resolve_plans_dir(project, plans_dir, config.plans_dir), append=append)
    if target.existing and not append:
        raise UsageError(
            f"{target.plans_dir / 'steps'} already has {len(target.existing)} step(s); "
            "stepkit plan writes nothing over a plan: --append adds the draft after them "
            "(nothing was written)"
        )
    if not spec.strip():
        raise UsageError("the spec is empty; nothing was written")
    existing = (
        [
            {"step": s.number, "title": s.title, "status": s.status}
            for s in PlanRepo.load(target.plans_dir).steps
        ]
        if target.existing
        else []
    )
    settings = {
        "project_dir": str(project),
        "plans_dir": str(target.plans_dir.resolve()),
        "engine": engine or config.engine,
        "coder": config.coder,
        "reviewer": config.reviewer,
        "stages": ["plan"],
    }
    pm = _plugin_manager(pm, project, config, disabled_plugins, ())
    _check_engine(pm, settings, list(disabled_plugins))
    pm.hook.stepkit_configure(config=config, settings=settings, presets=presets(pm), pm=pm)
    ctx = StageContext(
        node="plan",
        project_dir=project,
        plans_dir=target.plans_dir,
        state={},
        settings=settings,
        config=config,
        pm=pm,
        adhoc_dir=adhoc_dir(project),
    )
    problems: list[str] = []
    for _ in range(2):
        try:
            answer = pm.hook.stepkit_draft_plan(
                ctx=ctx, spec=spec, existing=existing, problems=problems
            )
        except StageFault as fault:
            raise ModelFault(f"the engine gave no draft: {fault.note}") from None
        if answer is None:
            raise UsageError("no plugin drafts plans (stepkit_draft_plan); nothing was written")
        try:
            draft = PlanDraft.model_validate(
                answer.model_dump() if hasattr(answer, "model_dump") else answer
            )
        except ValidationError as exc:
            problems = [f"the answer is not a plan draft: {describe_validation(exc)}"]
            continue
        problems = target.problems(draft)
        if not problems:
            return draft, target
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    raise UsageError(f"the drafted plan is invalid: {problems[0]}{more}; nothing was written")


def _run_stage(name: str, ctx: Any) -> Any:
    from stepkit.protocol.stages import run_stage

    return run_stage(name, ctx)


def _load_graph(source: str | Path | None, config: Any) -> Any:
    """The graph (None: the built-in step-runner), with the project's run
    timeout when it sets one."""
    from stepkit.protocol.graphs import load_protocol_graph

    graph = load_protocol_graph(source)
    if "run" in config.timeouts.model_fields_set:
        graph.timeout = config.timeouts.run
    return graph


def _initial_state(graph: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """The graph's initial state, the ``--set`` values, the prompt and the step asked for."""
    return {
        **graph.initial_state,
        **settings["sets"],
        "prompt": settings["prompt"],
        "step_request": settings["step"],
    }


def _settings(
    project: Path,
    config: Any,
    graph: Any,
    prompt: str | None,
    step: int | str | None,
    plans_dir: str | Path | None,
    engine: str | None,
    coder: str | None,
    reviewer: str | None,
    sets: dict[str, Any],
    answers: dict[str, str],
    options: Mapping[str, Any] | None,
    stages: list[str],
) -> dict[str, Any]:
    """Run settings: what stages and plugins read from ``ctx.settings``.

    ``--set`` values are both initial state and settings, so engine and coder
    knobs (``max_cost_usd``, ``llm_max_retries``, ``model_orient`` …) reach
    the plugins; they cannot replace the run's own keys below.  The
    environment switches are read here, once: a resume keeps them.
    ``stage_nodes`` tells the protocol which of the graph's nodes run each
    stage; ``stages`` names the stages the command will run, so
    ``stepkit_configure`` can check up front what they will need (an
    engine's credentials).

    :raises UsageError: ``step`` is neither a step number nor ``next``."""
    from stepkit.planrepo.model import resolve_plans_dir
    from stepkit.protocol.stages import stage_nodes
    from stepkit.protocol.switches import read_switches

    return {
        **sets,
        "prompt": prompt or "Execute the next step",
        "step": _step_request(step),
        "project_dir": str(project),
        "plans_dir": str(resolve_plans_dir(project, plans_dir, config.plans_dir).resolve()),
        "engine": engine or config.engine,
        "coder": coder or config.coder,
        "reviewer": reviewer or config.reviewer,
        "sets": sets,
        "answers": answers,
        "options": dict(options or {}),
        "switches": read_switches(os.environ),
        "stage_nodes": stage_nodes(graph),
        "stages": stages,
    }


def _worktree_setting(project: Path) -> dict[str, Any]:
    """``{"worktree": record}`` when ``project`` is the project dir of a
    stepkit work tree (:mod:`stepkit.workspace.worktree_record`), else ``{}``."""
    from stepkit.workspace.worktree_record import SETTING, record_of

    record = record_of(project)
    return (
        {SETTING: record.as_settings()}
        if record and Path(record.project).resolve() == project
        else {}
    )


def _step_request(step: int | str | None) -> str:
    """``--step`` as the graph's ``step_request``: a step number (1, 2, …) or ``next``."""
    text = "next" if step is None else str(step).strip()
    if text == "next" or (re.fullmatch(r"[0-9]+", text) and int(text) > 0):
        return text
    raise UsageError(f"--step {step}: expected a step number (1, 2, …) or 'next'")


def _new_run(store: Any) -> Any:
    """A new run directory, or one line saying why the run store cannot hold one."""
    try:
        return store.create()
    except OSError as exc:
        reason = (
            "it is not a directory"
            if store.runs.exists() and not store.runs.is_dir()
            else exc.strerror
        )
        raise UsageError(f"cannot create a run in {store.runs}: {reason}") from None


def _check_up_front(
    pm: Any, config: Any, settings: dict[str, Any], disabled: Iterable[str], sandbox: bool = True
) -> None:
    """The checks before a command runs anything: that a live plugin owns
    the engine kind (one disabled by ``-p no:`` is named before a plugin's
    own check finds no builder for it), the plugins' own
    (``stepkit_configure``: an engine's spec and credentials), then that a
    live plugin owns the coder and reviewer specs, then (``sandbox``) that a
    run that must confine its coder can.

    :raises UsageError: one line; nothing was run."""
    disabled = list(disabled)
    _check_engine(pm, settings, disabled)
    pm.hook.stepkit_configure(config=config, settings=settings, presets=presets(pm), pm=pm)
    _check_delegates(pm, settings, disabled)
    if sandbox:
        _check_sandbox(config)


def _check_sandbox(config: Any) -> None:
    """A run that must confine its coder can here.

    :raises UsageError: ``[sandbox] required = true`` and no sandbox can be
        made; nothing was run."""
    from stepkit.workspace.sandbox import unavailable

    why = unavailable()
    if why is not None and config.sandbox.required:
        raise UsageError(f"[sandbox] required = true, but the coder cannot be confined: {why}")


def _say_unconfined() -> None:
    """As a run starts or goes on: say on stderr that its coder runs
    unconfined here (each run's approval also carries a tamper flag)."""
    import sys

    from stepkit.workspace.sandbox import unavailable

    why = unavailable()
    if why is not None:
        print(f"stepkit: warning: the coder will run unconfined: {why}", file=sys.stderr)


def _say_replaced(settings: Mapping[str, Any]) -> None:
    """As a run starts: say on stderr which gate runs its next candidate in
    the place of a detected command that cannot start here (the run's events
    say it too: ``gate_command_replaced``)."""
    import sys

    from stepkit.workspace.gate_commands import start_replacements

    for replaced in start_replacements(settings):
        print(f"stepkit: {replaced['notice']}", file=sys.stderr)


def _stages_ahead(graph: Any, node: str) -> list[str]:
    """The stages of the nodes a run at ``node`` may still reach (``node`` included)."""
    seen, todo = set(), [node]
    while todo:
        current = todo.pop()
        if current in seen or current not in graph.nodes:
            continue
        seen.add(current)
        todo += graph.nodes[current].targets()
    return sorted({graph.nodes[n].stage for n in seen if graph.nodes[n].kind == "stage"})


def _check_engine(pm: Any, settings: dict[str, Any], disabled: Sequence[str]) -> None:
    """With plugins disabled by ``-p no:``, an engine kind that no plugin left
    names (``stepkit_engine_kinds``) is refused: its plugin is one of them."""
    spec = settings.get("engine")
    if not disabled or not spec:
        return
    kind = str(spec).partition(":")[0]
    named = {
        re.split(r"[:\[]", usage, maxsplit=1)[0]
        for answer in pm.hook.stepkit_engine_kinds()
        for usage in answer or {}
    }
    if kind not in named:
        raise UsageError(
            f"--engine {spec}: no enabled plugin provides the engine kind {kind!r} "
            f"(disabled: {', '.join(f'-p no:{name}' for name in disabled)}); nothing was run"
        )


def _check_delegates(pm: Any, settings: dict[str, Any], disabled: Sequence[str] = ()) -> None:
    """A coder or reviewer spec that no plugin answers for is a usage error
    before the run starts: asked through ``stepkit_check_delegate`` of the
    plugins, and only when each plugin implementing the stage's hook
    implements that check too (one that does not may own any spec)."""
    from stepkit.protocol.stages import STAGES

    for stage in STAGES.values():
        role = stage.delegate
        if role is None or stage.hook is None or stage.name not in settings["stages"]:
            continue
        owners = {impl.plugin_name for impl in getattr(pm.hook, stage.hook).get_hookimpls()}
        checkers = {impl.plugin_name for impl in pm.hook.stepkit_check_delegate.get_hookimpls()}
        spec = settings.get(role)
        if not owners and disabled and spec:
            raise UsageError(
                f"--{role} {spec}: no enabled plugin runs the {stage.name} stage "
                f"(disabled: {', '.join(f'-p no:{name}' for name in disabled)}); nothing was run"
            )
        if not owners or not owners <= checkers:
            continue
        answers = [
            a
            for a in reversed(
                pm.hook.stepkit_check_delegate(role=role, spec=spec, presets=presets(pm))
            )  # built-ins first
            if a is not None
        ]
        if answers and "" not in answers:
            off = (
                f"; disabled: {', '.join(f'-p no:{name}' for name in disabled)}" if disabled else ""
            )
            raise UsageError(
                f"--{role} {spec}: unknown {role} (use {'; '.join(dict.fromkeys(answers))}; "
                f"a plugin may add others{off})"
            )


class _LockNamesStep:
    """Keeps the project lock's record naming the run's step once it is resolved."""

    lock: ProjectLock | None = None

    @hookimpl
    def stepkit_node_finished(
        self, run_id: str, node: str, route: str | None, duration_s: float, state: dict[str, Any]
    ) -> None:
        if self.lock is not None:
            self.lock.name(step=state.get("step"))


def _plugin_manager(
    pm: Any,
    project: Path,
    config: Any,
    disabled: Iterable[str],
    observers: Iterable[Any],
    entry_points: Iterable[str] | None = None,
) -> Any:
    """The run's plugin manager; a resumed run's loads only the entry points
    its run found when it began (``entry_points``, from its settings)."""
    if pm is None:
        from stepkit.pluginmanager import get_plugin_manager
        from stepkit.workspace.worktree_record import record_of

        # a stepkit work tree's local plugins are the user's tree's, trusted there (as the CLI loads them)
        record = record_of(project)
        pm = get_plugin_manager(
            Path(record.origin) if record else project,
            config,
            list(disabled),
            entry_points=None if entry_points is None else set(entry_points),
        )
    _register(pm, observers)
    return pm


def _register(pm: Any, observers: Iterable[Any]) -> None:
    for observer in observers:
        pm.register(observer)


def _unregister(pm: Any, observers: Iterable[Any]) -> None:
    for observer in observers:
        if pm.is_registered(observer):
            pm.unregister(observer)
