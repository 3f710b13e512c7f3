"""The pristine re-check: the step's tests once more, without the step's
changes to the verification surface.

When the step changed a protected file (:mod:`stepkit.workspace.surface`)
and its tests gate passed (or ran no test), the tests gate's command runs
again in a scratch copy — never the user's tree — built with the baseline's
machinery (:func:`~stepkit.workspace.baseline.checked_out`): the step's
start commit, the step's changes to every other file written over it,
every protected file as it was before the step (one the step added is
left out), the step's new test files kept.  A failure there is judged
against the step's start as any failing gate is
(:class:`~stepkit.workspace.verdicts.Judge`: a flaky test and one that
failed before the step are not counted).

A test that existed before the step and fails there passes only with the
step's change to the surface: the tests gate fails, saying so, and the fix
loop is told that changing tests or their configuration is not a fix.
When the step's plan names every such changed file (its Tasks or Context
mention the path), the gate stands and the run carries a tamper flag with
the evidence instead, which forces the independent review; so it does
when the scratch copy cannot be built (a pre-step byte was not kept).

The lint gate is re-checked the same way, without the step's changes to the
surface's configuration and startup files only (its test files stay as the
step wrote them, so their new lint errors are seen): an error there that
the step's start did not have fails the gate.

A step that changed no protected file pays one look at its changed files
and runs no extra command.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepkit.records import GateResult, GateStatus, Outcome, StageContext, TamperFlag
from stepkit.text import first_of
from stepkit.workspace.baseline import BaselineUnavailable, BaseTree, checked_out, snapshot_tree
from stepkit.workspace.files import new_stamped_dir
from stepkit.workspace.gate_commands import run_scripts, run_search_roots
from stepkit.workspace.scope.diff import snapshot_changes
from stepkit.workspace.scope.snapshot import BeforeReader, Snapshot
from stepkit.workspace.scope.tree import data_id, read_bytes
from stepkit.workspace.surface import SurfaceChange, surface_changes, surface_rules
from stepkit.workspace.testresults import TestResults, file_of

NOT_A_FIX = (
    "Changing tests or their configuration (conftest.py, runner and lint configs, files that "
    "change how a tool starts) so that they pass is not a fix: they are restored before the "
    "tests are judged. Fix the code under test."
)
#: the plan sections whose mention of a path names it among the files the step changes
PLAN_SECTIONS = ("Tasks", "Context")
#: the most lines of a surface file's diff carried in a tamper flag (the whole diff is in the run's logs)
FLAG_DIFF_LINES = 30


@dataclass
class Recheck:
    """What the pristine re-check found.

    :ivar gate: the tests gate in the scratch copy (None: the copy could not be built).
    :ivar failing: pre-existing tests that fail without the step's surface changes.
    :ivar problem: why the re-check could not judge (a copy it could not
        build, a run that failed without naming a test), else None.
    """

    gate: GateResult | None
    failing: list[str]
    problem: str | None = None


def recheck_gate(
    ctx: StageContext,
    outcome: Outcome,
    snapshot: Snapshot | None,
    plan_files: str,
    name: str = "tests",
) -> Outcome:
    """``outcome`` of the node that ran gate ``name`` (``tests`` or ``lint``),
    judged once more when the step changed what judges it (unchanged
    otherwise): for the tests, the whole verification surface; for the
    linter, its configuration and what starts it (the ``config`` and
    ``startup`` kinds: a ``select = []`` in ``ruff.toml``), never the test
    files, whose new lint errors the copy must still see.

    :param snapshot: the step-start snapshot (None: no re-check can be had).
    :param plan_files: the text of the plan's :data:`PLAN_SECTIONS`: a
        path it mentions is one the plan names among the files to change.
    """
    if snapshot is None or not _judgeable(_gate_of(outcome, name)):
        return outcome
    changes = surface_of(ctx, snapshot, name)
    if not changes:
        return outcome
    log_dir = _log_dir(ctx, changes)
    ran = _pristine_job(ctx, snapshot, changes, name, log_dir)()
    return _judged(ctx, outcome, changes, ran, snapshot, plan_files, log_dir, name)


def recheck_tests(
    ctx: StageContext,
    run_tests: Callable[[list[str] | None, Callable[[], None] | None], Outcome],
    snapshot: Snapshot | None,
    plan_files: str,
    tool_changes: Callable[[], list[str]] | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> Outcome:
    """The tests gate's outcome (``run_tests(None, meanwhile)``: the whole
    command in the project, ``meanwhile`` called once it started), judged as :func:`recheck_gate` judges it, for about one
    suite run where the step changed the verification surface:

    - where the step only added test modules the runner runs alone
      (``run_tests(files, meanwhile)``), the earlier tests run in the pristine copy,
      without them, and the new modules alone in the project, side by side:
      the same isolation as the whole gate and then the re-check.  Where an
      earlier test fails without them, the whole gate runs after all and
      is judged as before;
    - else the re-check runs beside the whole gate, in a thread (both
      confined as the node is); a gate that passes where the re-check
      fails fails, as before.

    The copy's tests gate is judged as the project's is: ``tool_changes``
    and ``meanwhile`` (called, without blocking, once the first test process
    has started) as :class:`~stepkit.workspace.gates.GateRunner` takes them.
    """
    changes = surface_of(ctx, snapshot, "tests") if snapshot is not None else []
    if snapshot is None or not changes:
        return run_tests(None, meanwhile)
    log_dir = _log_dir(ctx, changes)
    added = _added_modules(ctx, changes)
    pristine = _beside(
        _pristine_job(ctx, snapshot, changes, "tests", log_dir, tool_changes, meanwhile)
    )
    outcome = run_tests(added or None, meanwhile)
    ran = pristine()
    if added:
        merged = _merged(ctx, outcome, ran, changes, log_dir)
        if merged is not None:
            return merged
        outcome = run_tests(None, meanwhile)
    return _judged(ctx, outcome, changes, ran, snapshot, plan_files, log_dir, "tests")


def surface_of(ctx: StageContext, snapshot: Snapshot, name: str) -> list[SurfaceChange]:
    """The step's changes to what judges gate ``name`` (:func:`recheck_gate`)."""
    rules = surface_rules(
        ctx.pm, ctx.project_dir, ctx.config, run_scripts(ctx.settings, ctx.pm, ctx.project_dir)
    )
    roots = run_search_roots(ctx.settings, ctx.project_dir)
    changes = surface_changes(
        rules,
        snapshot,
        ctx.project_dir,
        lambda rel, test_file: ctx.pm.hook.stepkit_added_file_reach(
            project_dir=Path(ctx.project_dir), path=rel, test_file=test_file, search_roots=roots
        ),
    )
    return changes if name == "tests" else [c for c in changes if c.kind != "tests"]


def _gate_of(outcome: Outcome, name: str) -> GateResult | None:
    gates = outcome.updates.get("gates") or []
    return next((GateResult.model_validate(g) for g in gates if g["name"] == name), None)


def _judgeable(gate: GateResult | None) -> bool:
    """A gate the re-check can overturn: one that ran a command and passed (or ran no test)."""
    return gate is not None and gate.command is not None and gate.status in ("pass", "not_run")


def _log_dir(ctx: StageContext, changes: list[SurfaceChange]) -> Path:
    """The re-check's log dir, with the surface's diff in it."""
    log_dir = new_stamped_dir(ctx.log_dir() / "pristine")
    (log_dir / "surface.diff").write_text("".join(c.diff for c in changes), encoding="utf-8")
    return log_dir


def _added_modules(ctx: StageContext, changes: list[SurfaceChange]) -> list[str]:
    """The test modules the step added, when they are its only change to the
    surface and the tests command's runner runs test files alone; else none."""
    from stepkit.workspace.gate_commands import run_gate_plan
    from stepkit.workspace.runners import runners
    from stepkit.workspace.testrunners import runs_files

    if not all(c.how == "added" and c.kind == "tests" for c in changes):
        return []
    plan = run_gate_plan(ctx.settings, ctx.pm, ctx.project_dir, ctx.config, tests=False)
    command = plan.command("tests")[0]
    files = [c.path for c in changes]
    if command is None or not runs_files(command, Path(ctx.project_dir), files, runners(ctx.pm)):
        return []
    return files


def _beside(work: Callable[[], Recheck]) -> Callable[[], Recheck]:
    """Start ``work`` now in a thread of its own, in this thread's context
    (the node's sandbox, its supervision); the function returned waits for it."""
    context = contextvars.copy_context()
    done: list[Recheck] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(context.run(work))
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=run, name="stepkit-pristine", daemon=True)
    thread.start()

    def result() -> Recheck:
        thread.join()
        if failed:
            raise failed[0]
        return done[0]

    return result


def _merged(
    ctx: StageContext,
    outcome: Outcome,
    ran: Recheck,
    changes: list[SurfaceChange],
    log_dir: Path,
) -> Outcome | None:
    """The tests gate of a step that only added test modules, from the
    earlier tests in the pristine copy and the new modules alone (their
    outcomes and verdicts together; a failure of either fails it).  None
    when the earlier tests did not pass there: the whole gate decides."""
    alone, earlier = _gate_of(outcome, "tests"), ran.gate
    if ran.problem is not None or earlier is None or earlier.status != "pass" or alone is None:
        return None
    if alone.tests is None or not alone.tests.complete or not alone.tests.outcomes():
        return None  # the new modules' run named no test outcome of its own: the whole gate
    if alone.status not in ("pass", "not_run", "fail"):
        return outcome  # the new modules' command could not run, or timed out: it says so
    status: GateStatus = "fail" if alone.status == "fail" else "pass"
    both = TestResults(
        source=alone.tests.source if alone.tests else "junit XML",
        complete=bool(
            earlier.tests and earlier.tests.complete and alone.tests and alone.tests.complete
        ),
    )
    for part in (earlier, alone):
        for test_id, test_status in ((part.tests.outcomes() if part.tests else None) or {}).items():
            both.add(test_id, test_status)  # type: ignore[arg-type]
    record = both.record(log_dir / "tests.json")
    shown = ", ".join(c.line() for c in changes)
    note = (
        f"[stepkit: the step added test module(s) {shown}: the earlier tests ran without them, "
        f"the new ones alone (the same isolation as the pristine re-check); "
        f"diff: {log_dir / 'surface.diff'}]\n"
        f"pristine re-check (the step's code, the surface as it was before the step): PASS "
        f"({earlier.summary}); log: {earlier.log}"
    )
    judged = alone.model_copy(
        update={
            "status": status,
            "tests": record,
            "summary": (
                f"{both.counts_line()} (the earlier tests without the new modules: "
                f"{earlier.summary}; the new modules alone: {alone.summary})"
            ),
            "preexisting_failures": [*earlier.preexisting_failures, *alone.preexisting_failures],
            "flaky": [*earlier.flaky, *alone.flaky],
            "order_dependent": [*earlier.order_dependent, *alone.order_dependent],
            "evidence": f"{note}\n\n[the new test modules alone, with the step's changes]\n"
            f"{alone.evidence}\n\n[the earlier tests, without the step's new test modules; "
            f"log: {earlier.log}]\n{earlier.evidence}",
        }
    )
    ctx.emit(
        "pristine_recheck",
        gate="tests",
        surface=[c.line() for c in changes],
        status=status,
        failing=[],
        problem=None,
        diff=str(log_dir / "surface.diff"),
    )
    gates = outcome.updates.get("gates") or []
    updates = {
        **outcome.updates,
        "surface_changes": [c.line() for c in changes],
        "gates": [judged.model_dump() if g["name"] == "tests" else g for g in gates],
    }
    return Outcome(route="fail" if status == "fail" else outcome.route, updates=updates)


def _judged(
    ctx: StageContext,
    outcome: Outcome,
    changes: list[SurfaceChange],
    ran: Recheck,
    snapshot: Snapshot,
    plan_files: str,
    log_dir: Path,
    name: str,
) -> Outcome:
    """``outcome`` judged by the pristine copy's run ``ran`` (unchanged when
    the gate did not pass: its failure stands)."""
    original = _gate_of(outcome, name)
    if original is None or not _judgeable(original):
        return outcome
    gates = outcome.updates.get("gates") or []
    diff_path = log_dir / "surface.diff"
    found = _classify(ran, original, changes, snapshot, Path(ctx.project_dir))
    changed = ", ".join(c.path for c in changes)
    # a test module the step added need not be named beside a named change (plans say "add tests")
    judged_by_name = [c for c in changes if not c.why] or changes
    named = plan_names(plan_files, [c.path for c in judged_by_name])
    notes = [
        (
            f"[stepkit: the step changed the verification surface: {', '.join(c.line() for c in changes)}; "
            f"diff: {diff_path}]"
        )
    ]
    updates: dict[str, Any] = {"surface_changes": [c.line() for c in changes]}
    status: GateStatus = original.status
    summary, pristine_output = original.summary, ""
    if found.problem is None and not found.failing:
        notes.append(
            f"pristine re-check (the step's code, the surface as it was before the step): PASS"
            f" ({found.gate.summary if found.gate else ''}); log: {found.gate.log if found.gate else ''}"
        )
    else:
        reason = found.problem or _failing_reason(name, found.failing, changed)
        log = f"; log: {found.gate.log}" if found.gate and found.gate.log else ""
        # a copy that cannot be built is no evidence against the code: the review judges the change
        excused = (
            f"the plan names {changed} among the files to change"
            if found.problem is None and named
            else "the step's surface changes could not be judged"
            if found.gate is None
            else None
        )
        if excused is not None:
            flag = (
                f"{reason} ({excused}, so the {name} gate stands; the independent review must "
                f"judge it){log}; diff: {diff_path}\n" + _flag_diff(changes)
            )
            raised = TamperFlag.by(f"the {name} gate", "pristine", flag)
            updates["tamper_flags"] = [*ctx.state.get("tamper_flags", []), raised.model_dump()]
            notes.append(
                f"pristine re-check: {'FAIL' if found.gate else 'NOT RUN'}: {reason}; "
                f"tamper flag raised{log}"
            )
        else:
            status, summary = "fail", reason
            notes.append(f"pristine re-check: FAIL: {reason}{log}\n{NOT_A_FIX}")
            if found.gate is not None:  # last, where a failure's report shows a gate's output
                pristine_output = f"\n\n[the pristine re-check's run]\n{found.gate.evidence}"
    judged = original.model_copy(
        update={
            "status": status,
            "summary": summary,
            "new_failures": (
                sorted({*original.new_failures, *found.failing})
                if status == "fail"
                else original.new_failures
            ),
            "evidence": "\n".join(notes)
            + f"\n\n[the {name} gate with the step's changes]\n"
            + original.evidence
            + pristine_output,
        }
    )
    ctx.emit(
        "pristine_recheck",
        gate=name,
        surface=[c.line() for c in changes],
        status=status,
        failing=found.failing,
        problem=found.problem,
        diff=str(diff_path),
    )
    updates["gates"] = [judged.model_dump() if g["name"] == name else g for g in gates]
    return Outcome(
        route="fail" if status == "fail" else outcome.route, updates={**outcome.updates, **updates}
    )


def plan_names(plan_files: str, paths: list[str]) -> bool:
    """The plan names every one of ``paths`` among the files the step
    changes: its :data:`PLAN_SECTIONS` text (``plan_files``) mentions each."""
    return bool(plan_files) and bool(paths) and all(path in plan_files for path in paths)


def _pristine_job(
    ctx: StageContext,
    snapshot: Snapshot,
    changes: list[SurfaceChange],
    name: str,
    log_dir: Path,
    tool_changes: Callable[[], list[str]] | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> Callable[[], Recheck]:
    """Gate ``name``'s command in the scratch copy, judged there as the
    project's own gate is (its baseline, its failing ids re-run in the
    copy; the tools the step changed, ``tool_changes``, fail its tests):
    the copy's files are read now, the function runs it."""
    from stepkit.workspace.gate_commands import run_gate_plan
    from stepkit.workspace.gates import GateRunner
    from stepkit.workspace.verdicts import Judge

    lost = [c.path for c in changes if not c.known]
    if lost:
        problem = (
            f"no pristine re-check: the bytes of {', '.join(lost)} as they were "
            f"before the step were not kept, so the surface cannot be restored"
        )
        return lambda: Recheck(None, [], problem)
    try:
        tree = pristine_tree(snapshot, changes, ctx.project_dir)
    except BaselineUnavailable as exc:
        unavailable = f"no pristine re-check: {exc}"
        return lambda: Recheck(None, [], unavailable)
    looks = name == "tests" and tool_changes is None  # the plan looks for the tools' changes
    plan = run_gate_plan(ctx.settings, ctx.pm, ctx.project_dir, ctx.config, tests=looks)

    def run() -> Recheck:
        try:
            with checked_out(tree) as where:
                runner = GateRunner(
                    ctx.pm,
                    where,
                    ctx.config,
                    log_dir,
                    plan=plan,
                    tool_changes=tool_changes,
                    meanwhile=meanwhile,
                )
                (gate,) = runner.run((name,))
                judge = Judge(
                    ctx.config.baseline,
                    ctx.project_dir,
                    log_dir,
                    snapshot_tree(snapshot),
                    lambda gate, ids, at, logs, suite: runner.run_for_judge(
                        gate, ids, where if Path(at) == Path(ctx.project_dir) else at, logs, suite
                    ),
                )
                return Recheck(judge.judge(gate), [])
        except BaselineUnavailable as exc:
            return Recheck(None, [], f"no pristine re-check: {exc}")

    return run


def _classify(
    ran: Recheck,
    original: GateResult,
    changes: list[SurfaceChange],
    snapshot: Snapshot,
    project_dir: Path,
) -> Recheck:
    """What the copy's run ``ran`` names: the pre-existing tests, or lint
    errors, that fail there and did not before the step."""
    gate = ran.gate
    if gate is None or ran.problem is not None:
        return ran
    added = {rel for rel, old, _new in snapshot_changes(snapshot, project_dir) if old is None}
    if gate.status == "pass" or _nothing_earlier(gate, original, added):
        return Recheck(gate, [])
    failing = gate.new_failures or (gate.tests.failing if gate.tests else [])
    if gate.status != "fail" or not failing:
        return Recheck(
            gate,
            [],
            f"the {original.name} gate ends {gate.status.upper()} ({gate.summary}) "
            f"without the step's change to {', '.join(c.path for c in changes)}",
        )
    if original.name != "tests":
        return Recheck(gate, [f for f in failing if f not in original.preexisting_failures])
    old = [
        t
        for t in failing
        if t not in original.preexisting_failures
        and t not in original.flaky
        and file_of(t) not in added
    ]
    return Recheck(gate, old)


def _nothing_earlier(gate: GateResult, original: GateResult, added: set[str]) -> bool:
    """The copy ran no test, and every test the step's own run ran is in a
    file the step added: there was no earlier test to re-check (a project's
    first tests), so nothing the step changed can have hidden one.  Where an
    earlier test ran with the step's change, a copy that runs none is no
    such thing and stays a failure."""
    if original.name != "tests" or gate.status != "not_run" or original.tests is None:
        return False
    ran = original.tests.outcomes() or {}
    return bool(ran) and all(file_of(test_id) in added for test_id in ran)


def pristine_tree(snapshot: Snapshot, changes: list[SurfaceChange], project_dir: Path) -> BaseTree:
    """The step's start with the step's changes written over it, but the
    verification surface as it was before the step."""
    project = Path(project_dir).resolve()
    protected = {c.path: c for c in changes}
    reader = _StepReader(BeforeReader(snapshot))
    tree = snapshot_tree(snapshot)
    tree.label = "the step's code with the verification surface as it was before the step"
    tree.reader = reader
    for rel, _old, new in snapshot_changes(snapshot, project):
        change = protected.get(rel)
        if change is not None:
            data = change.before
        else:
            data = read_bytes(project / rel) if new is not None else None
            if new is not None and data is None:
                raise BaselineUnavailable(f"the step's version of {rel} could not be read")
        tree.files[rel] = reader.hold(data) if data is not None else None
    return tree


class _StepReader:
    """The before reader, and the bytes the pristine copy takes from the step."""

    def __init__(self, before: BeforeReader):
        self.before = before
        self.held: dict[str, bytes] = {}

    def hold(self, data: bytes) -> str:
        oid = data_id(data)
        self.held[oid] = data
        return oid

    def read(self, oid: str | None) -> bytes | None:
        if oid is None:
            return None
        return self.held.get(oid) or self.before.read(oid)


def _failing_reason(gate: str, failing: list[str], changed: str) -> str:
    if gate == "tests":
        return f"{_ids(failing)} pass{'es' if len(failing) == 1 else ''} only with the step's change to {changed}"
    return (
        f"{gate} finds {len(failing)} new error{'s' if len(failing) != 1 else ''} without the step's "
        f"change to {changed}: {_ids(failing)}"
    )


def _ids(ids: list[str]) -> str:
    return first_of(ids, 5)


def _flag_diff(changes: list[SurfaceChange]) -> str:
    lines = "".join(c.diff for c in changes).splitlines()
    cut = lines[:FLAG_DIFF_LINES]
    if len(lines) > len(cut):
        cut.append(f"[... {len(lines) - len(cut)} more diff lines in the run's logs ...]")
    return "\n".join(f"    {line}" for line in cut)
