"""The step-runner's verify nodes: the gates, the step-level fix loop and the
deterministic handoff check.  The harness, never a model, decides what passed.

The gate nodes run what the coder wrote: in a ``--worktree`` run each one
watches the user's own tree (:mod:`stepkit.protocol.watched`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from stepkit import gatetable
from stepkit.protocol.envfault import environment_fault_reason
from stepkit.protocol.fixloop import FIX_RULES, next_fix
from stepkit.protocol.start import start_measure, start_snapshot
from stepkit.protocol.state import StepState, step_state
from stepkit.protocol.watched import Node, watched, with_flags
from stepkit.records import GateResult, Outcome, StageContext, TamperFlag
from stepkit.text import first_of


def _commandless(gates: Callable[[Any], Iterable[str]]) -> Callable[[StageContext], bool]:
    """Whether none of the node's ``gates`` (given the run's gate plan) has
    a command: the node runs nothing (:func:`~stepkit.protocol.watched.watched`'s ``idle``)."""

    def idle(ctx: StageContext) -> bool:
        plan = _gate_plan(ctx, tests=False)
        return all(plan.command(name)[0] is None for name in gates(plan))

    return idle


@watched("the format and lint gates", idle=_commandless(lambda plan: plan.first_gates()))
def verify_format_lint(ctx: StageContext) -> Outcome:
    """Format first (recorded, never fails the step), then lint.  When the
    project's CI builds before it formats or lints, the build runs first
    here, as there: those steps may read what it generates."""
    plan = _gate_plan(ctx, tests=False)
    names = plan.first_gates()
    runner = _gate_runner(
        ctx,
        plan=plan,
        watch_format=True,
        stamp_passes="build" in names,
        narrow_lint=_lint_scope(step_state(ctx)),
    )
    results, updates = _run_guarded(ctx, runner, names)
    updates["format_changed_tree"] = runner.format_changed_tree
    decisive = next(
        (r for r in results if gatetable.gate(r.name).fails_step and r.failed), results[-1]
    )
    outcome = _gate_route(decisive, updates, ctx.pm)
    if outcome.route != "pass":
        return outcome
    return _rechecked(ctx, outcome, "lint")


def _lint_scope(state: StepState) -> tuple[list[str], list[str]] | None:
    """In a fix round, what the lint may be narrowed to: the step's changed
    files and those the last lint failed on, with every path the step
    changed (:mod:`stepkit.workspace.narrowing`); None: the whole command
    (the step's first lint, or a last lint whose failures name no file)."""
    last = next((g for g in state.gates if g.name == "lint"), None)
    if last is None or last.status not in ("pass", "fail"):
        return None
    failed = [*last.new_failures, *last.preexisting_failures]
    if last.status == "fail" and not failed:
        return None
    changed = state.changed_files
    return [*changed, *(key.split(": ", 1)[0] for key in failed)], list(changed)


def _linted_whole(ctx: StageContext, outcome: Outcome) -> Outcome:
    """``outcome`` of a passing tests gate, after the whole lint command when
    this round's lint ran narrowed: the step proceeds on the project's own
    lint verdict, and a failure there is the fix loop's."""
    gates = outcome.updates.get("gates") or [g.model_dump() for g in step_state(ctx).gates]
    lint = next((g for g in gates if g.get("name") == "lint"), None)
    if outcome.route != "pass" or lint is None or lint.get("narrowed_to") is None:
        return outcome
    linted = _single_gate(ctx, "lint")
    latest = {g["name"]: g for g in gates}
    latest["lint"] = next(g for g in linted.updates["gates"] if g["name"] == "lint")
    updates = dict(outcome.updates)
    for key, value in linted.updates.items():  # lists (flags, the history) add up
        if key == "gates":
            continue
        had = updates.get(key)
        updates[key] = (
            [*had, *(v for v in value if v not in had)] if isinstance(had, list) else value
        )
    updates["gates"] = [latest[name] for name in gatetable.GATE_ORDER if name in latest]
    return Outcome(route=linted.route, updates=updates)


def _rechecked(ctx: StageContext, outcome: Outcome, gate: str) -> Outcome:
    """``outcome`` judged once more without the step's changes to what judges
    ``gate`` (:func:`stepkit.workspace.pristine.recheck_gate`)."""
    from stepkit.workspace.pristine import recheck_gate

    return recheck_gate(ctx, outcome, start_snapshot(ctx), _plan_files(ctx), gate)


def _plan_files(ctx: StageContext) -> str:
    """The text of the plan's sections that name the files the step changes."""
    from stepkit.planrepo.sections import plan_section
    from stepkit.workspace.pristine import PLAN_SECTIONS

    plan = step_state(ctx).plan_text
    return "\n".join(plan_section(plan, name) or "" for name in PLAN_SECTIONS)


@watched("the build gate", idle=_commandless(lambda plan: ["build"]))
def verify_build(ctx: StageContext) -> Outcome:
    """Build or type-check; no command is NOT RUN and the step goes on.  A
    build that ran before the format and lint gates (CI's order) stands when
    they left the tree as it built it."""
    plan = _gate_plan(ctx, tests=False)
    if "build" not in plan.first_gates():
        return _single_gate(ctx, "build", plan=plan)
    built = [gate for gate in step_state(ctx).gates if gate.name == "build"]
    return _single_gate(
        ctx, "build", plan=plan, reusable=built, reused_from="the build gate before the formatter"
    )


@watched("the tests gate")
def verify_tests(ctx: StageContext) -> Outcome:
    """The FULL test suite, not only the new tests; once more without the
    step's changes to the verification surface when it made any, beside it
    or in its place (:func:`stepkit.workspace.pristine.recheck_tests`).  A
    pass records the tree it verified."""
    from stepkit.protocol.verified import with_verified_tree
    from stepkit.workspace.gates import Meanwhile
    from stepkit.workspace.pristine import recheck_tests

    # what only the verdicts read is looked at once the first test process has
    # started: the start's measure (measured while the coder worked; else from
    # now, beside the gate) and the tools the step changed
    start = Meanwhile(lambda: start_measure(ctx))
    # while the gate's tests run, the measure steps aside; a verdict that reads
    # its records brings it back at the gate's priority
    aside = Meanwhile(lambda: _step_aside(start.value()))
    tools = _tool_changes(ctx)

    def meanwhile() -> None:
        start.start()
        tools.start()
        aside.start()

    try:
        checked = recheck_tests(
            ctx,
            lambda only, meanwhile: _single_gate(
                ctx, "tests", only_tests=only, tool_changes=tools.value, meanwhile=meanwhile
            ),
            start_snapshot(ctx),
            _plan_files(ctx),
            tools.value,
            meanwhile,
        )
        judged = _flaky_flagged(ctx, _conserved(ctx, checked, start.value()))
    finally:
        _come_back(aside)
    return with_verified_tree(ctx, _linted_whole(ctx, judged))


def _step_aside(start: Any) -> Any:
    if start is not None:
        start.step_aside()
    return start


def _come_back(aside: Any) -> None:
    """The gate is over: the measure goes on (the next coder round, or the
    nodes after the gates, hide it).  A measure that could not be begun
    has nothing to go on with (the verdict that read it said why)."""
    try:
        start = aside.value()  # started here when the gate started no process
    except Exception:  # noqa: BLE001 - raised to the verdict already, or to be
        return
    if start is not None:
        start.come_back()


def _conserved(ctx: StageContext, outcome: Outcome, start: Any) -> Outcome:
    """Test-id conservation: every test that passed at the step's start
    still runs and passes (:func:`~stepkit.workspace.start_outcomes.lost_tests`).
    One that went missing, was deselected, was not collected, was skipped or
    renamed is a tamper flag naming it, and the tests gate fails unless the
    plan names its file among the files to change.  Not judged on a round
    that failed on the step's own new tests alone (:func:`_fails_on_added_tests`)."""
    from stepkit.workspace.pristine import NOT_A_FIX, plan_names
    from stepkit.workspace.start_outcomes import conserved_by_listing, lost_tests
    from stepkit.workspace.testresults import file_of

    gates = outcome.updates.get("gates") or []
    raw = next((g for g in gates if g["name"] == "tests"), None)
    if start is None or raw is None:
        return outcome
    gate = GateResult.model_validate(raw)
    if gate.command is None or _fails_on_added_tests(ctx, gate, start.tree):
        return outcome
    listed = start.listed_ids("tests", gate.command)
    if conserved_by_listing(listed, gate):
        ctx.emit("tests_conserved", lost=[], listed=len(listed or ()))
        return outcome
    lost = lost_tests(start.record("tests", gate.command), gate)
    if not lost:
        return outcome
    files = sorted({file_of(test_id) for test_id in lost})
    # worded with no word of a passing claim: the handoff check reads the flags the handoff shows
    reason = (
        f"{len(lost)} test{'s' if len(lost) != 1 else ''} that held at the step's start "
        f"{'do' if len(lost) != 1 else 'does'} not run to a result after it (missing, deselected, "
        f"not collected, skipped or renamed): {first_of(lost, 5)}"
    )
    named = plan_names(_plan_files(ctx), files)
    excuse = (
        f" (the plan names {', '.join(files)} among the files to change, so the tests gate "
        "stands; the independent review must judge it)"
        if named
        else ""
    )
    flag = TamperFlag.by("the tests gate", "lost_tests", f"{reason}{excuse}")
    updates = dict(outcome.updates)
    if flag not in step_state(ctx).tamper_flags:
        updates = with_flags(ctx, updates, [flag])
    route = outcome.route
    if not named:
        route = "fail"
        judged = gate.model_copy(
            update={
                "status": "fail",
                "summary": f"{gate.summary}; {reason}" if gate.summary else reason,
                "new_failures": sorted({*gate.new_failures, *lost}),
                "evidence": f"[stepkit: {reason}]\n{NOT_A_FIX}\n\n{gate.evidence}",
            }
        )
        updates["gates"] = [judged.model_dump() if g["name"] == "tests" else g for g in gates]
    ctx.emit("tests_conserved", lost=lost, named=named)
    return Outcome(route=route, updates=updates)


def _fails_on_added_tests(ctx: StageContext, gate: GateResult, start_tree: Any) -> bool:
    """The tests gate failed on tests in files the step added, and only on
    them: the round fails whatever the start did, so it goes back to the
    coder without waiting for the start's measure.  Which tests went
    missing is judged on every round that may pass, and on one that failed
    on an earlier test (its verdict waited for the measure already)."""
    from stepkit.workspace.start_outcomes import added_by_step

    failing = gate.new_failures
    if gate.status != "fail" or not failing or gate.preexisting_failures or gate.flaky:
        return False
    return added_by_step(Path(ctx.project_dir), start_tree, failing) == set(failing)


def gate_node(name: str) -> Node:
    """The node of a gate that needs no node of its own: it runs gate
    ``name`` of the gate table alone; ``pass`` (a pass, or NOT RUN),
    ``fail`` (the fix loop, when the gate's failure fails the step) or
    ``error`` (an environment fault).  ``verify_<name>`` in a graph is
    this node for any gate of the table without a function of that name
    here (:func:`__getattr__`)."""
    gatetable.gate(name)  # a gate of the table, or ValueError

    def verify_gate(ctx: StageContext) -> Outcome:
        return _single_gate(ctx, name)

    verify_gate.__name__ = verify_gate.__qualname__ = f"verify_{name}"
    verify_gate.__doc__ = f"The {name} gate alone."
    return watched(f"the {name} gate", idle=_commandless(lambda plan: [name]))(verify_gate)


def __getattr__(attribute: str) -> Node:
    """``verify_<gate>``: :func:`gate_node` of a gate of the table (a graph's
    ``call: stepkit.protocol.nodes.verify:verify_security`` names it)."""
    name = attribute.removeprefix("verify_")
    if name != attribute and name in gatetable.GATE_ORDER:
        return gate_node(name)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def _flaky_flagged(ctx: StageContext, outcome: Outcome) -> Outcome:
    """A tests gate that passed with flaky tests carries a tamper flag, which
    forces the review: code that fails the first time and passes the second
    (a marker file, bytecode it writes for itself) is flaky to the judge.
    A round flag, so the coder round a review sends back keeps it."""
    gate = next((g for g in outcome.updates.get("gates", []) if g.get("name") == "tests"), None)
    if outcome.route != "pass" or not gate or not gate.get("flaky"):
        return outcome
    shown = first_of(gate["flaky"], 5)
    # worded with no word of a passing claim: the handoff check reads the flags the handoff shows
    flag = TamperFlag.by(
        "the tests gate",
        "flaky_pass",
        f"flaky tests let the tests gate through: {shown} failed, then did not fail when run "
        "again. A second run is no evidence: code can fail only the first time it runs",
    )
    return outcome.model_copy(update={"updates": with_flags(ctx, outcome.updates, [flag])})


def _single_gate(ctx: StageContext, name: str, **options: Any) -> Outcome:
    runner = _gate_runner(ctx, format_changed_tree=step_state(ctx).format_changed_tree, **options)
    (result,), updates = _run_guarded(ctx, runner, (name,))
    return _gate_route(result, updates, ctx.pm)


def _gate_route(result: GateResult, updates: dict[str, Any], pm: Any = None) -> Outcome:
    """``pass`` (a pass, or NOT RUN: the step goes on, the gate marked NOT RUN
    everywhere), ``fail`` (the fix loop), or ``error``: an environment fault
    ends the run without spending a fix attempt — no coder can fix the machine."""
    if result.status == "error":
        return Outcome(
            route="error",
            updates={**updates, "failure_reason": environment_fault_reason(result, pm)},
        )
    return Outcome(route="fail" if result.failed else "pass", updates=updates)


def _run_guarded(
    ctx: StageContext, runner: Any, names: tuple[str, ...]
) -> tuple[list[GateResult], dict[str, Any]]:
    """Run gates one by one with the plan repo held: what a gate does to it (a
    formatter that also formats markdown, a test that writes there) is undone
    before the next gate, every displaced file kept in the run dir, and the
    gate named in ``scope_deviations`` and ``gates_edited_plan_repo``."""
    from stepkit.protocol.stages import undo_git_edits, undo_plan_edits
    from stepkit.workspace.scope import copy_plan_repo, git_internals

    results, deviations, edited, git_flags = [], [], [], []
    # gates with no command run nothing: there is nothing to hold or put back
    runs = any(runner.plan.command(name)[0] is not None for name in names)
    # one copy serves every gate: after each, the plan repo is put back to it
    before, git_before = (
        (copy_plan_repo(ctx.project_dir, ctx.plans_dir), git_internals(ctx.project_dir))
        if runs
        else (None, None)
    )
    for name in names:
        (result,) = runner.run((name,))
        results.append(result)
        if not runs:
            continue
        git_flags += undo_git_edits(ctx, git_before, name)  # a test that plants a hook, say
        undone = undo_plan_edits(ctx, before, name).get("scope_deviations", [])
        deviations += undone
        edited += [name] if undone else []
    state = step_state(ctx)
    updates = _merge_gates(state, results)
    plan_flags = [
        TamperFlag.of_stepkit("command_change", text) for text in runner.plan.command_changes
    ]
    plan_flags = [
        flag for flag in plan_flags if flag not in state.tamper_flags
    ]  # once, at the first gate
    # stepkit's own records were forged: a tamper flag, which forces the review
    store_flags = [
        TamperFlag.of_stepkit("run_store", text)
        for result in results
        for text in result.store_flags
    ]
    updates = with_flags(ctx, updates, [*plan_flags, *git_flags, *store_flags])
    if edited:
        updates["scope_deviations"] = deviations
        updates["gates_edited_plan_repo"] = sorted({*state.gates_edited_plan_repo, *edited})
    return results, updates


def _gate_runner(ctx: StageContext, **options: Any):
    """The step's gate runner: each result is a ``gate`` event of the run, and
    the coder's own passing gates (unless ``reusable`` names others) may stand
    in for a gate on the same bytes.  It runs the commands the run fixed at
    its first gate, and the formatter gets the coder's changes since the
    step started."""
    from stepkit.workspace.gates import GateRunner, existing_files

    state = step_state(ctx)
    if "reusable" not in options and ctx.config.reuse_coder_evidence:
        coder = state.coder_result
        options.update(
            reusable=list(coder.gates) if coder else [], reused_from="the coder's own gate"
        )
    if "plan" not in options:  # not setdefault: that would make a plan to throw away
        options["plan"] = _gate_plan(ctx, tests=False)
    if "tool_changes" not in options:
        options["tool_changes"] = _tool_changes(ctx).value
    # absent without a scope snapshot: the changes against HEAD
    changed = state.changed_files if "changed_files" in state.model_fields_set else None
    return GateRunner(
        ctx.pm,
        ctx.project_dir,
        ctx.config,
        ctx.log_dir(),
        change_set=None if changed is None else lambda: existing_files(ctx.project_dir, changed),
        held_plans_dir=ctx.plans_dir,  # _run_guarded restores the plan repo and flags the gate
        on_gate=lambda result: ctx.emit("gate", **result.model_dump(exclude={"evidence"})),
        on_reused=lambda result, tree: ctx.emit("gate_reused", gate=result.name, tree_hash=tree),
        baseline=lambda: _start_tree(ctx),
        **options,
    )


def _gate_plan(ctx: StageContext, *, tests: bool = True):
    """The commands the run fixed at its first gate (made then); with the
    tools the step changed only for a node that runs the tests gate."""
    from stepkit.workspace.gate_commands import run_gate_plan

    return run_gate_plan(ctx.settings, ctx.pm, ctx.project_dir, ctx.config, tests=tests)


def _tool_changes(ctx: StageContext) -> Any:
    """The tools the step changed (:attr:`~stepkit.workspace.gate_commands.GatePlan.tool_changes`),
    looked for when started or first asked: only a passing tests gate needs
    them, and the look reads every installed file of the gates' tools."""
    from stepkit.workspace.gates import Meanwhile

    return Meanwhile(lambda: _gate_plan(ctx).tool_changes)


def _start_tree(ctx: StageContext):
    """The tree the step started from, for the gates' baseline (None: the
    run kept no step-start snapshot, or it was altered)."""
    from stepkit.workspace.baseline import snapshot_tree

    snapshot = start_snapshot(ctx)
    return snapshot_tree(snapshot) if snapshot is not None else None


def _merge_gates(state: StepState, results: list[GateResult]) -> dict[str, Any]:
    """Replace the latest record of each gate; add every run to gate_history
    (which the graph appends to)."""
    latest = {gate.name: gate for gate in state.gates}
    for result in results:
        latest[result.name] = result
    ordered = [latest[name].model_dump() for name in gatetable.GATE_ORDER if name in latest]
    return {"gates": ordered, "gate_history": [r.model_dump(exclude={"evidence"}) for r in results]}


def fix_loop_gate(ctx: StageContext) -> Outcome:
    """Spend one step-level fix attempt on the first failing gate, or stop
    (the budget and "no progress" rules: :func:`~stepkit.protocol.fixloop.next_fix`)."""
    from stepkit.workspace.verdicts import evidence_for_fix

    state = step_state(ctx)
    failing = _first_failing_gate(state)
    if failing is None:  # only a custom graph can get here without a failing gate
        return Outcome(
            route="budget spent",
            updates={"failure_reason": "fix loop entered with no failing gate"},
        )
    attempts = state.fix_attempts
    # what the coder is asked to fix (the new failures), not the baseline's notes
    fix_evidence = evidence_for_fix(failing)
    verdict = next_fix(failing, attempts, state.max_fix_attempts, state.last_failure_signature)
    if verdict.stop is not None:
        return Outcome(route="budget spent", updates={"failure_reason": verdict.stop})
    # condensed evidence starts with its own "$ command" / "exit code" lines
    header = [
        line
        for line in (f"$ {failing.command}", f"exit code: {failing.exit_code}")
        if line not in fix_evidence.split("\n")
    ]
    instructions = "\n".join(
        [f"The {failing.name} gate failed after your change.", *header, fix_evidence, FIX_RULES]
    )
    return Outcome(
        route="budget left",
        updates={
            "fix_attempts": attempts + 1,
            "fix_instructions": instructions,
            "last_failure_signature": verdict.signature,
            "fix_history": [
                f"fix attempt {attempts + 1}: {failing.name} failed ({failing.summary})"
            ],
        },
    )


def _first_failing_gate(state: StepState) -> GateResult | None:
    """The first gate, in the table's order, whose failure fails the step and that failed."""
    by_name = {gate.name: gate for gate in state.gates}
    for row in gatetable.GATES:
        result = by_name.get(row.name)
        if row.fails_step and result and result.failed:
            return result
    return None


# -- handoff -----------------------------------------------------------------


def check_handoff(ctx: StageContext) -> Outcome:
    """The deterministic handoff gate: one retry with the list of problems."""
    from stepkit.protocol.handoff.check import handoff_problems, read_handoff
    from stepkit.protocol.handoff.render import shown_gates
    from stepkit.protocol.stages import handoff_draft

    state = step_state(ctx)
    gates = state.gates
    path = handoff_draft(ctx)
    try:
        shown = shown_gates(gates, ctx.project_dir)  # as the handoff names them
        problems = handoff_problems(ctx.pm, path, read_handoff(path), shown)
    except OSError as exc:
        problems = [f"handoff file {path} cannot be read: {exc.strerror or exc}"]
    problems += _criteria_problems(state)
    checks = state.handoff_checks + 1
    if not problems:
        from stepkit.protocol.glance import review_updates

        updates = {"handoff_checks": checks, "handoff_feedback": [], **review_updates(ctx)}
        return Outcome(route="schema valid", updates=updates)
    if checks < 2:
        return Outcome(
            route="one retry", updates={"handoff_checks": checks, "handoff_feedback": problems}
        )
    return Outcome(
        route="invalid twice",
        updates={
            "handoff_checks": checks,
            "handoff_feedback": problems,
            "failure_reason": "handoff failed validation twice: " + "; ".join(problems),
        },
    )


def _criteria_problems(state: StepState) -> list[str]:
    """The acceptance-criteria map the handoff writer gave, checked against
    the plan and the final tests gate (:mod:`stepkit.protocol.criteria`)."""
    from stepkit.protocol.criteria import criteria_problems, final_tests_gate, plan_criteria

    criteria = plan_criteria(state.plan_text)
    return criteria_problems(criteria, state.acceptance_criteria, final_tests_gate(state.gates))
