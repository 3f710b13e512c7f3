"""The one gate runner: run the verification commands and record the evidence.

:class:`GateRunner` is what every caller runs gates with: ``stepkit verify`` and
``stepkit stage verify`` (:func:`run_gates`), the step's verify nodes and the
built-in coder, which differ only in the options they pass (tree hashing,
reuse, callbacks).

Each gate's command runs through :func:`stepkit.workspace.process.run`: with the shell
in the project directory, in its own process group, under a wall-clock limit
and a no-output limit (on expiry the whole group is killed), its output
(stdout and stderr merged) streamed to ``<log_dir>/<gate>-<n>.log`` with
secrets masked and kept in bounded memory for the evidence.

Status is decided here from the exit code and the tools' own messages, never
by a model: ``pass`` (0), ``fail`` (any other code, or killed by a signal),
``timeout`` (a limit expired), ``error`` (an environment fault, not the
code's: exit 126/127, the command could not be started, or its output names a
missing tool or toolchain, an unreachable registry or a terminal it needs —
see :mod:`stepkit.workspace.faults`), ``not_run`` (no command; a tests
command that ran no test — its runner said so, it printed nothing, its
runner never wrote the report it was asked for, or no test in the report
passed; a formatter that had nothing to format: NOT evidence of a pass).

The tests gate asks its runner for a machine-readable report
(:func:`~stepkit.workspace.testrunners.report_invocation`) and records
which test ids passed, failed, errored or were skipped (``tests``).  Given
the tree before the change (``baseline``), a failing gate is then judged by
:class:`~stepkit.workspace.verdicts.Judge`: the failing ids re-run (flaky
or order-dependent), the same command run on that tree, the failures split into new and
pre-existing (the project's ``baseline`` setting decides the verdict).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from stepkit.config import Config, Logs
from stepkit.records import GATE_ORDER, Evidence, GateName, GateResult, GateStatus, TestsRecord
from stepkit.workspace import process, sandbox
from stepkit.workspace.evidence import clip_middle, condense, summary_of
from stepkit.workspace.faults import (
    NO_TEST_NOTE,
    environment_fault,
    no_tests_reason,
    nothing_to_format_reason,
    prepare,
)
from stepkit.workspace.gate_commands import (
    GatePlan,
    PlannedCommand,
    expand_files,
    has_files_placeholder,
    plan_gates,
)
from stepkit.workspace.loglines import LogLines
from stepkit.workspace.process import NOT_RUNNABLE, ProcessResult, signal_name, signal_of
from stepkit.workspace.runners import Runners, runners
from stepkit.workspace.scope import bytecode, git
from stepkit.workspace.scope.diff import working_tree_files
from stepkit.workspace.scope.plancopy import PlanScope
from stepkit.workspace.scope.putback import (
    hold_files,
    numbered_dir,
    refresh_listing,
    restore_lockfiles,
    restore_outside,
)
from stepkit.workspace.scope.tree import (
    Listing,
    hash_ids,
    listing,
    tree_hash,
)
from stepkit.workspace.submodules import submodule_fault
from stepkit.workspace.testresults import TestResults, failing_of
from stepkit.workspace.testrunners import (
    TestInvocation,
    files_invocation,
    report_invocation,
    rerun_invocation,
)
from stepkit.workspace.toolpath import tool_env
from stepkit.workspace.worktree_record import WorktreeRecord, record_of

T = TypeVar("T")

if TYPE_CHECKING:
    from stepkit.workspace.baseline import BaseTree
    from stepkit.workspace.narrowing import Narrowed
    from stepkit.workspace.verdicts import Judge


def run_gates(
    pm,
    project_dir: Path,
    config: Config,
    log_dir: Path,
    gates: Iterable[str] = GATE_ORDER,
    on_gate: Callable[[GateResult], None] | None = None,
    on_start: Callable[[str, str | None], None] | None = None,
    plan: GatePlan | None = None,
    baseline: BaseTree | Callable[[], BaseTree | None] | None = None,
    change_set: Callable[[], list[str] | None] | None = None,
) -> list[GateResult]:
    """Run the requested gates in the plan's order with a :class:`GateRunner`
    that looks at the tree around every gate (each result names the files
    its gate changed) and reuses nothing; the arguments are the runner's."""
    return GateRunner(
        pm,
        project_dir,
        config,
        log_dir,
        plan=plan,
        change_set=change_set,
        on_gate=on_gate,
        on_start=on_start,
        watch_every_gate=True,
        baseline=baseline,
    ).run(gates)


def existing_files(project_dir: Path, paths: Iterable[str]) -> list[str]:
    """The paths (project-relative) that are files now: a change set without its deletions."""
    return [rel for rel in paths if (Path(project_dir) / rel).is_file()]


class GateRunner:
    """Runs gates in protocol order (format first, so the other gates'
    evidence describes the formatted bytes), or in the order the project's
    CI runs them when it builds before it formats or lints (the plan's
    :meth:`~stepkit.workspace.gate_commands.GatePlan.run_order`: that step
    may need the build's output; when the build fails, such a step is
    recorded NOT RUN rather than failed for output that does not exist), and
    records their evidence.

    The commands are fixed when the runner is made: ``plan`` (a run's
    :class:`~stepkit.workspace.gate_commands.GatePlan`), else one
    :func:`~stepkit.workspace.gate_commands.plan_gates` then; the plugins
    are never asked again, whatever a gate leaves behind.

    What no gate may change is put back after it, the version it left kept
    under ``displaced/<gate>-<n>/`` beside ``log_dir`` (a run's dir, a
    verify's) and named in its summary and evidence:

    - a lockfile git tracks (the plan's ``lockfiles``), after every gate;
    - after the formatter, any file outside the change set (``change_set``:
      the step's changed files; default the work tree's changes against
      HEAD).  ``{files}`` in the format command is that change set
      (:func:`~stepkit.workspace.gate_commands.expand_files`); when it
      holds no file to format the formatter does not run.  Outside git
      nothing is restored (and ``{files}`` is unknown in ``stepkit verify``);
    - after any other gate (its judge's re-runs included), a tracked file it
      changed that the step did not: clean against git's index before the
      gate and outside the change set (a test script running a whole-tree
      formatter, say).  A file the step changed stays as the gate left it:
      the step's files are the step's business, and ``changed_files`` names it.

    The tree is looked at (one git process) before and after every gate in a
    git work tree, and outside git with ``watch_every_gate``: each such
    result's ``changed_files`` names what its gate changed (None: not looked at).
    Other costs are opt-in:

    - ``watch_format``: the formatter's result carries the hash of the tree
      it left, and :attr:`format_changed_tree` says whether it changed the
      bytes.  The formatter is recorded and never fails the step.
    - ``stamp_passes``: stamp each passing gate with the hash of the tree it
      left (so a later runner can reuse it); :attr:`tree_ids` keeps the file
      ids behind the stamp of the last gate.
    - ``reusable``: earlier passing results that stand in for a gate whose
      command is the same and whose tree is byte-identical, their evidence
      headed ``[reused: same tree …]``; never the formatter, and nothing once
      the formatter changed the tree.

    :param on_start: called with ``(gate, command)`` before each gate runs
        (the format command with its files in place).
    :param on_gate: called with each result as soon as its gate ran.
    :param on_reused: called with each reused result and the tree's hash.
    :param reused_from: who ran the reusable results (named in the note).
    :param format_changed_tree: the formatter already changed the tree
        (in an earlier runner of the same step): reuse nothing.
    :param keep_dir: where displaced versions go (default: ``displaced``
        beside ``log_dir``).
    :param baseline: the tree before the change (a
        :class:`~stepkit.workspace.baseline.BaseTree`, or a function giving
        one or None, called only when a gate fails): failing gates are judged
        against it (:attr:`judge`); None: no judging, the exit code decides.
    :param tools_from: the tree the project's tools were installed for, when
        the runner runs in a copy of it (the step's start): their editable
        installs then import the copy's source (:func:`~stepkit.workspace.toolpath.tool_env`).
    :param held_plans_dir: a plan repo the caller holds and restores itself
        after each gate (flagging the gate): the formatter's edits there are
        left to it.
    :param only_tests: test files the tests gate runs alone, in a process of
        their own, where its runner can (else its whole command runs).
    :param narrow_lint: a fix round's ``(files, changed)``: the lint gate's
        command runs on those of ``files`` it checks where the command and
        the tool allow it (:func:`~stepkit.workspace.narrowing.narrowed`;
        ``changed``: every path the step changed), else whole.
    :param tool_changes: the tools the step changed, asked once a tests gate
        passed (default: the plan's :attr:`~stepkit.workspace.gate_commands.GatePlan.tool_changes`).
    :param meanwhile: called once the tests gate's command has started: the
        caller's work that need not delay it (looking for ``tool_changes``).
    """

    def __init__(
        self,
        pm,
        project_dir: Path,
        config: Config,
        log_dir: Path,
        *,
        plan: GatePlan | None = None,
        change_set: Callable[[], list[str] | None] | None = None,
        held_plans_dir: Path | None = None,
        on_start: Callable[[str, str | None], None] | None = None,
        on_gate: Callable[[GateResult], None] | None = None,
        on_reused: Callable[[GateResult, str], None] | None = None,
        watch_format: bool = False,
        watch_every_gate: bool = False,
        stamp_passes: bool = False,
        reusable: Iterable[GateResult] = (),
        reused_from: str = "an earlier run",
        format_changed_tree: bool = False,
        baseline: BaseTree | Callable[[], BaseTree | None] | None = None,
        tools_from: Path | None = None,
        only_tests: list[str] | None = None,
        narrow_lint: tuple[list[str], list[str]] | None = None,
        tool_changes: Callable[[], list[str]] | None = None,
        meanwhile: Callable[[], None] | None = None,
    ):
        self.only_tests = only_tests
        self.tool_changes, self.meanwhile = tool_changes, meanwhile
        self.narrow_lint = narrow_lint
        self.pm, self.project_dir, self.config, self.log_dir = (
            pm,
            Path(project_dir),
            config,
            Path(log_dir),
        )
        self.plan = plan if plan is not None else plan_gates(pm, self.project_dir, config)
        self.env = (
            tool_env(tools_from, self.plan.tool_dirs, where=self.project_dir)
            if tools_from is not None
            else tool_env(self.project_dir, self.plan.tool_dirs)
        )
        #: the stepkit work tree holding the project, when its dependencies are not prepared
        self.unprepared = next(
            (r for r in [record_of(self.project_dir)] if r is not None and r.unprepared), None
        )
        self.change_set = change_set or (
            lambda: working_tree_files(self.project_dir, self.project_dir / config.plans_dir)
        )
        self.keep_dir = self.log_dir.parent / "displaced"
        self.held_plan = (
            PlanScope.of(self.project_dir, held_plans_dir) if held_plans_dir is not None else None
        )
        self.on_start, self.on_gate, self.on_reused = on_start, on_gate, on_reused
        self.watch_format, self.watch_every_gate, self.stamp_passes = (
            watch_format,
            watch_every_gate,
            stamp_passes,
        )
        self.reusable = [
            g
            for g in reusable
            if g.status == "pass" and g.command is not None and g.narrowed_to is None
        ]
        self.reused_from = reused_from
        #: the formatter changed the bytes the earlier results saw
        self.format_changed_tree = format_changed_tree
        #: the build failed or could not run: the gates CI runs after it are not run
        #: (:meth:`~stepkit.workspace.gate_commands.GatePlan.needs_build`)
        self.build_failed = False
        #: file ids of the tree as the last gate left it, when it passed (``stamp_passes``)
        self.tree_ids: dict[str, str] | None = None
        self._tree: str | None = None  # the tree's hash now, when known without hashing again
        self._seen: Listing | None = None  # the tree as the last gate of this run() left it
        self._git: bool | None = None  # the project is in a git work tree (asked once)
        self._step: tuple[list[str] | None] | None = (
            None  # the change set, once asked in this run()
        )
        #: judges failing gates against the baseline (None: no baseline given)
        self.judge: Judge | None = None
        if baseline is not None:  # the baseline's machinery is imported only then
            from stepkit.workspace.verdicts import Judge

            self.judge = Judge(
                config.baseline, self.project_dir, self.log_dir, baseline, self.run_for_judge
            )

    def run(self, gates: Iterable[str] = GATE_ORDER) -> list[GateResult]:
        """Run the requested gates (any order; unknown names raise ValueError).

        :return: one :class:`GateResult` per gate, in run order.
        """
        wanted = set(gates)
        unknown = wanted - set(GATE_ORDER)
        if unknown:
            raise ValueError(f"unknown gate(s): {', '.join(sorted(unknown))}")
        self._seen = None  # between two calls the caller may change the tree
        self._step = None
        return [self._run_one(gate) for gate in self.plan.run_order() if gate in wanted]

    def _run_one(self, name: GateName) -> GateResult:
        """Run one gate, or reuse an earlier result of it."""
        command, plugin = self.plan.command(name)
        if command is not None and self.unprepared is not None:
            return self._record(_unprepared(name, command, plugin, self.unprepared))
        reused = self._reuse(name, command)
        if reused is not None:
            return reused
        planned = self.plan.commands.get(name) or PlannedCommand()
        if planned.not_run:
            return self._record(skipped(name, None, plugin, "not_run", planned.not_run))
        if planned.fault:
            return self._record(skipped(name, command, plugin, "error", planned.fault))
        if self.build_failed and self.plan.needs_build(name):
            return self._record(
                skipped(
                    name,
                    command,
                    plugin,
                    "not_run",
                    "not run: the build failed, and CI runs this gate after the build "
                    "(it may need the build's output)",
                )
            )
        formats = name == "format" and command is not None
        scope = self._step_files() if formats else None
        to_run, unscoped = _scoped(command, scope) if formats else (command, None)
        if unscoped is not None:
            return self._record(skipped(name, command, plugin, *unscoped))
        looks = formats or self.watch_every_gate or self._in_git()
        if to_run is None:
            return self._record(self._no_command(name, plugin, looks))
        before = (self._seen or listing(self.project_dir)) if looks else None
        # the step's files (known in a git work tree only), taken before the gate changes the tree:
        # the formatter may change only those; another gate's changes to the others are put back
        step = set(self._step_files() or ()) if before is not None and before.git else None
        outside = (
            []
            if not formats or step is None or before is None
            else [p for p in sorted(before.hashed - step) if not self._plan_holds(p)]
        )
        held = hold_files(self.project_dir, [*self.plan.lockfiles, *outside])
        narrow = self._narrowed(name, to_run)
        to_run = narrow.command if narrow is not None else to_run
        if self.on_start is not None:
            self.on_start(name, to_run)
        result = self._run_gate(name, to_run, plugin, self._only_tests(name, to_run))
        result.command = (
            command  # as planned (and as detect prints it); the evidence shows what ran
        )
        if narrow is not None:
            result.narrowed_to = narrow.files
            result.evidence = (
                f"[stepkit ran the lint on the {len(narrow.files)} file(s) the step changed or "
                f"the last lint failed on; the step proceeds only on the whole command]\n"
                f"{result.evidence}"
            )
        self._name_tools(result)
        self._tree = None  # a command ran: the tree may have changed
        stamp = self.stamp_passes and result.status == "pass"
        if self.judge is not None and result.status in ("fail", "error"):
            # looked at after the judge: its re-runs in the project are the gate's too
            result = self.judge.judge(result)
        after = self._look_after(result, before, step, held, stamp)
        rewrote = before is not None and after is not None and before.ids != after.ids
        if formats and result.status == "fail" and rewrote:
            result = self._formatted_again(result, name, to_run, plugin)
            stamp = self.stamp_passes and result.status == "pass"
        self._seen = after
        if after is not None and (stamp or (formats and self.watch_format)):
            result.tree_hash = self._tree = hash_ids(after.ids)
        if formats and self.watch_format and before is not None and after is not None:
            self.format_changed_tree = self.format_changed_tree or before.ids != after.ids
        return self._record(result)

    def _narrowed(self, name: GateName, command: str) -> Narrowed | None:
        """The lint command on :attr:`narrow_lint`'s files (None: it runs whole)."""
        if name != "lint" or self.narrow_lint is None:
            return None
        from stepkit.workspace.narrowing import narrowed
        from stepkit.workspace.tools import tools

        files, changed = self.narrow_lint
        return narrowed(command, existing_files(self.project_dir, files), changed, tools(self.pm))

    def _only_tests(self, name: GateName, command: str) -> TestInvocation | None:
        """The tests gate's command running :attr:`only_tests` alone (None:
        the whole command, as :func:`run_gate` makes it)."""
        if name != "tests" or not self.only_tests:
            return None
        self.log_dir.mkdir(parents=True, exist_ok=True)
        report_dir = Path(
            tempfile.mkdtemp(prefix="tests-only-", suffix=".report", dir=self.log_dir)
        )
        invocation = files_invocation(
            command, self.project_dir, report_dir, self.only_tests, self.env, runners(self.pm)
        )
        if invocation is not None:
            invocation.note = (
                f"stepkit ran only the test module(s) the step added, in a process of their own "
                f"(the earlier tests ran without them): {', '.join(self.only_tests)}"
            )
        return invocation

    def _run_gate(
        self,
        name: GateName,
        command: str,
        plugin: str | None,
        invocation: TestInvocation | None = None,
    ) -> GateResult:
        """``command`` run as gate ``name`` with this runner's limits, log
        directory, environment and plugins (``invocation``: how a tests
        command runs, when not as :func:`run_gate` makes it)."""
        limits = self.config.timeouts
        return run_gate(
            name,
            command,
            plugin,
            self.project_dir,
            self.log_dir,
            timeout=limits.gate(name),
            no_output_timeout=limits.no_output,
            pm=self.pm,
            env=self.env,
            invocation=invocation,
            log_limit=self.config.logs.max_bytes,
            meanwhile=self.meanwhile if name == "tests" else None,
        )

    def _formatted_again(
        self, failed: GateResult, name: GateName, command: str, plugin: str | None
    ) -> GateResult:
        """A formatter that rewrote files and exited non-zero (pre-commit's
        hooks say "files were modified" that way) is run once more on its own
        output: that run's verdict is the gate's.  A formatter that fails
        again on the bytes it left fails."""
        again = self._run_gate(name, command, plugin)
        if again.status != "pass":
            return failed
        again.command = failed.command
        said = "it rewrote files and exited non-zero; run again on what it wrote, it passed"
        again.evidence = f"[{said}]\n{again.evidence}"
        return again

    def _no_command(self, name: GateName, plugin: str | None, looks: bool) -> GateResult:
        """A gate with no command, not run: it changes nothing, so the tree is
        not looked at around it (``changed_files`` is empty where it would be
        looked at)."""
        if self.on_start is not None:
            self.on_start(name, None)
        result = run_gate(
            name,
            None,
            plugin,
            self.project_dir,
            self.log_dir,
            timeout=None,
            no_output_timeout=None,
            pm=self.pm,
        )
        if looks:
            result.changed_files = []
        return result

    def run_for_judge(
        self,
        name: GateName,
        ids: list[str] | None,
        where: Path,
        log_dir: Path,
        suite: list[str] | None = None,
    ) -> GateResult | None:
        """The gate's command again for the judge: just ``ids`` (None when the
        runner cannot select them; ``suite``: every id, to select exactly),
        or all of it in ``where`` (the project, or the baseline tree)."""
        command, plugin = self.plan.command(name)
        invocation = None
        if ids is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
            report_dir = Path(
                tempfile.mkdtemp(prefix=f"{name}-rerun-", suffix=".report", dir=log_dir)
            )
            invocation = rerun_invocation(
                command or "", where, report_dir, ids, suite=suite, judged_by=runners(self.pm)
            )
            if invocation is None:
                return None
        limits = self.config.timeouts
        env = (
            self.env
            if Path(where) == self.project_dir
            else tool_env(self.project_dir, self.plan.tool_dirs, where=Path(where))
        )
        return run_gate(
            name,
            command,
            plugin,
            where,
            log_dir,
            timeout=limits.gate(name),
            no_output_timeout=limits.no_output,
            pm=self.pm,
            env=env,
            invocation=invocation,
            log_limit=self.config.logs.max_bytes,
        )

    def _name_tools(self, result: GateResult) -> None:
        """Name the tool directories the gate ran with; a tests gate whose
        tools the step changed fails, whatever its command said."""
        if self.plan.tool_dirs and result.command is not None:
            result.evidence = (
                f"environment: {', '.join(self.plan.tool_dirs)} first on PATH "
                f"(the project's own tools)\n{result.evidence}"
            )
        if result.name != "tests" or result.status != "pass":
            return
        changes = self.tool_changes() if self.tool_changes is not None else self.plan.tool_changes
        if changes:
            changed = ", ".join(changes)
            result.status = "fail"
            result.summary = f"the step changed tools the gates run: {changed}"
            result.evidence = (
                f"FAIL: the step changed tools the gates run ({changed}); changing the "
                f"tools that judge the step is not a fix\n{result.evidence}"
            )

    def _look_after(
        self,
        result: GateResult,
        before: Listing | None,
        step: set[str] | None,
        held: dict[str, bytes | None],
        stamp: bool,
    ) -> Listing | None:
        """After a gate: put back what it had no business changing (tracked
        lockfiles; for the formatter, files outside the step's files
        ``step``; for the others, the tracked files it changed that the step
        did not) and record what it changed; the tree as it is now, when
        looked at (``before`` given, or ``stamp``: keep its ids in
        :attr:`tree_ids`)."""
        keep = numbered_dir(self.keep_dir, result.name)
        restored = restore_lockfiles(self.project_dir, self.plan.lockfiles, held, keep)
        if self.stamp_passes:
            self.tree_ids = None
        after = listing(self.project_dir) if before is not None or stamp else None
        if before is not None and after is not None:
            result.changed_files = _changed(before.ids, after.ids, restored)
            others = [
                p for p in result.changed_files if p not in restored and not self._plan_holds(p)
            ]
            if step is not None and result.name == "format":
                wrong = [p for p in others if p not in step]
                restored.update(restore_outside(self.project_dir, wrong, before, held, keep))
            elif step is not None:
                restored.update(
                    restore_outside(
                        self.project_dir, _not_the_steps(others, before, step), before, {}, keep
                    )
                )
            refresh_listing(after, self.project_dir, restored)
        _note_restored(result, restored, result.name == "format")
        if after is not None and stamp:
            self.tree_ids = after.ids
        return after

    def _step_files(self) -> list[str] | None:
        """The step's change set, asked once per :meth:`run` (before a gate
        changes the tree: the default reads the work tree against HEAD)."""
        if self._step is None:
            self._step = (self.change_set(),)
        return self._step[0]

    def _in_git(self) -> bool:
        """The project is in a git work tree (asked once): only there does
        every gate look at the tree, to put back what it rewrote."""
        if self._git is None:
            self._git = git.location(self.project_dir) is not None
        return self._git

    def _plan_holds(self, rel: str) -> bool:
        """``rel`` is in the plan repo the caller restores itself."""
        return self.held_plan is not None and self.held_plan.covers(rel)

    def _record(self, result: GateResult) -> GateResult:
        if result.name == "build" and result.failed:
            self.build_failed = True
        if self.on_gate is not None:
            self.on_gate(result)
        return result

    def _reuse(self, name: str, command: str | None) -> GateResult | None:
        """An earlier passing run of the same command on byte-identical files."""
        if name == "format" or command is None or self.format_changed_tree:
            return None
        candidates = [g for g in self.reusable if g.name == name and g.command == command]
        if not candidates:
            return None
        if self._tree is None:
            self._tree = tree_hash(self.project_dir)
        for gate in candidates:
            if gate.tree_hash == self._tree:
                note = f"[reused: same tree {self._tree[:12]}, run at {gate.started_at} by {self.reused_from}]"
                reused = gate.model_copy(update={"evidence": f"{note}\n{gate.evidence}"})
                if self.on_reused is not None:
                    self.on_reused(reused, self._tree)
                return reused
        return None


def code_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` as the code under test gets it: without stepkit's own
    variables (``STEPKIT_*``: what stepkit runs, where it keeps its
    records); :func:`~stepkit.workspace.process.run` adds the one it needs."""
    return {k: v for k, v in env.items() if not k.startswith(STEPKIT_PREFIX)}


#: What stepkit's own environment variables start with.
STEPKIT_PREFIX = "STEPKIT_"


def run_gate(
    name: GateName,
    command: str | None,
    plugin: str | None,
    project_dir: Path,
    log_dir: Path,
    timeout: float | None,
    no_output_timeout: float | None,
    pm,
    env: Mapping[str, str] | None = None,
    invocation: TestInvocation | None = None,
    log_limit: int = Logs().max_bytes,
    meanwhile: Callable[[], None] | None = None,
) -> GateResult:
    """Run one gate's command and record it.

    :param name: the gate (``format``, ``lint``, ``build``, ``tests``).
    :param command: the shell command; None records the gate as ``not_run``.
    :param plugin: the plugin that chose the command (recorded).
    :param project_dir: where the command runs.
    :param log_dir: where ``<name>-<n>.log`` is written (created if missing).
    :param timeout: wall-clock limit in seconds (None: no limit).
    :param no_output_timeout: limit in seconds without any output (None: no limit).
    :param pm: the plugin manager whose parsers condense the output.
    :param env: the command's environment (default: this process's).
    :param invocation: for the tests gate, the command as it runs (default:
        ``command`` asking its runner for a report beside the log).
    :param log_limit: about the most bytes the log keeps (``[logs] max_mb``).
    :param meanwhile: called once the command has started (not when it could not start).
    """
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    if command is None:
        return _not_run(name, plugin, started_at)
    log_path = _new_log(Path(log_dir), name)
    if name == "tests" and invocation is None:
        judged_by = runners(pm)
        invocation = report_invocation(
            command, Path(project_dir), log_path.with_suffix(".report"), env, judged_by
        )
        judges = Meanwhile(lambda: _ready_to_judge(judged_by))
    else:
        # only the output's judging needs the runners' declarations: they are
        # read while the command runs (a first gate's command starts sooner)
        judges = Meanwhile(lambda: _ready_to_judge(runners(pm)))
    run_env = code_env(env if env is not None else os.environ)
    if invocation is not None:
        run_env.update(invocation.env)
    bytecode.drop_untrusted(
        Path(project_dir)
    )  # bytecode the code under test forged for itself meanwhile
    report_dir = invocation.report_dir if invocation is not None else None
    with sandbox.widened([report_dir] if report_dir is not None else []):
        result = process.run(
            invocation.command if invocation is not None else command,
            cwd=Path(project_dir),
            env=run_env,
            timeout=timeout,
            no_output_timeout=no_output_timeout,
            log_path=log_path,
            log_limit=log_limit,
            meanwhile=in_turn(judges.start, meanwhile),
        )
    status, note, exit_code, headline, alone = _classify(name, result, judges.value())
    if status == "fail" and (missing := submodule_fault(Path(project_dir), result.output)):
        status, note, headline, alone = "error", f"error: {missing}{_FAULT}", missing, True
    if invocation is not None and invocation.note:
        note = f"{note}\n{invocation.note}" if note else invocation.note
    output = result.output
    evidence = condense(
        pm,
        name,
        command,
        output,
        exit_code,
        result.log,
        total_lines=result.lines,
        note=note,
    )
    tests = None
    if invocation is not None and result.start_error is None:
        found = invocation.results(LogLines(result.log, output), evidence)
        if status == "pass":
            found = _with_printed_failures(found, evidence)
        tests = found.record(log_path.with_suffix(".tests.json")) if found is not None else None
        if found is not None and found.failing and not evidence.tests:
            # the report names failures the output's parser did not (node's test runner)
            evidence = _with_reported_failures(evidence, found)
        if status == "pass" and found is not None and found.failing:
            failing = len(found.failing)
            status, alone = "fail", False
            headline = (
                f"exit code 0, yet the run reported {failing} failing test{'s' if failing != 1 else ''}: "
                "a run that reports a failure is no pass, whatever its exit code"
            )
        reason = invocation.ran_no_test(output, found) if status == "pass" else None
        if reason is not None:
            status, note, headline, alone = _no_test_ran(reason)
            evidence = condense(
                pm,
                name,
                command,
                output,
                exit_code,
                result.log,
                total_lines=result.lines,
                note=f"{note}\n{invocation.note}" if invocation.note else note,
            )
    summary = summary_of(evidence, output) or (
        f"no output (exit code {exit_code})" if exit_code is not None else ""
    )
    if headline:
        summary = headline if alone or not summary else f"{headline}: {summary}"
    return GateResult(
        name=name,
        status=status,
        command=command,
        plugin=plugin,
        exit_code=exit_code,
        duration_s=result.duration_s,
        log=result.log,
        summary=summary,
        evidence=evidence.text,
        condensed=evidence,
        started_at=started_at,
        tests=tests,
    )


def _ready_to_judge(table: Runners) -> Runners:
    """``table``, once what judging a gate's output by it first builds is
    built: its no-test rules' needs (:func:`~stepkit.workspace.faults.prepare`)
    and the models of the gate's result (built on first use,
    :mod:`stepkit.models`).  Called while the command runs (:class:`Meanwhile`):
    after the command's end, the verdict waited for them (about 3 ms)."""
    prepare(table)
    for model in (GateResult, Evidence, TestsRecord, TestResults):
        model.model_rebuild()  # builds a model not built yet; nothing for one that is
    return table


class Meanwhile(Generic[T]):
    """``call``, run in a thread of its own from :meth:`start` (a command's
    ``meanwhile``: once the command has started, it takes nothing from the
    way there; a second start, another command's, does nothing);
    :meth:`value` waits for its value, or raises what it raised, and starts
    it when it was never started (the command could not start)."""

    def __init__(self, call: Callable[[], T]):
        import threading

        self._call = call
        self._done: list[tuple[bool, Any]] = []
        self._thread: Any = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Run ``call`` in a thread of its own, unless it was started already."""
        import threading

        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="stepkit-beside", daemon=True
                )
                self._thread.start()

    def value(self) -> T:
        """``call``'s value."""
        self.start()
        self._thread.join()
        ok, found = self._done[0]
        if not ok:
            raise found
        return found

    def _work(self) -> None:
        try:
            self._done.append((True, self._call()))
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            self._done.append((False, exc))


def in_turn(*calls: Callable[[], None] | None) -> Callable[[], None] | None:
    """The ``calls`` that are not None, one after the other (None: none is)."""
    kept = [call for call in calls if call is not None]
    if len(kept) < 2:
        return kept[0] if kept else None

    def each() -> None:
        for call in kept:
            call()

    return each


def _with_reported_failures(evidence: Evidence, found: TestResults) -> Evidence:
    """``evidence`` with the failing tests of the runner's report, which its
    parser did not name: listed after its text, and its summary their counts."""
    return evidence.model_copy(
        update={
            "text": "\n".join(
                [evidence.text, "[from the runner's report]", *found.failing_lines()]
            ),
            "failing": [*evidence.failing, *found.failing],
            "tests": {i: s for i, s in found.outcomes.items() if s in ("failed", "errored")},
            "summary": found.counts_line(),
        }
    )


def _with_printed_failures(found: TestResults | None, evidence: Evidence) -> TestResults | None:
    """The run's per-test results with every failure its output printed.

    The code under test runs inside the test process: it can set the exit
    code at will (``atexit``, ``os._exit``) and rewrite the report after the
    runner wrote it, but what the runner printed while the tests ran was in
    stepkit's pipe by then.  A failure either one names is a failure."""
    printed = failing_of(evidence)
    if printed is None or found is None:
        return found or printed
    for test_id in printed.failing:
        found.add(test_id, printed.outcomes[test_id])
    return found


def not_run_text(name: str, plugin: str | None = None) -> str:
    """The evidence of a gate that has no command: plainly not a pass."""
    text = (
        f"GATE NOT RUN: no {name} command was found for this project. "
        f"This is NOT evidence that {name} passed."
    )
    if plugin:
        text += f"\n(plugin {plugin!r} answered that this project has no {name} command.)"
    return text


def _not_run(name: GateName, plugin: str | None, started_at: str) -> GateResult:
    return GateResult(
        name=name,
        status="not_run",
        command=None,
        plugin=plugin,
        exit_code=None,
        summary=f"not run: no {name} command",
        evidence=not_run_text(name, plugin),
        started_at=started_at,
    )


#: Said of a gate the machine, not the code, stopped.
_FAULT = " — an environment fault, not a failure of the code"


def _classify(
    name: str, result: ProcessResult, judged_by: Runners
) -> tuple[GateStatus, str | None, int | None, str | None, bool]:
    """(status, note for the evidence, recorded exit code, summary headline,
    whether the headline is the whole summary)."""
    if result.start_error is not None:
        headline = f"could not start the command: {result.start_error}"
        return "error", f"error: {headline}{_FAULT}", None, headline, True
    if result.expired is not None:
        return (
            "timeout",
            f"{result.expired}; its process group was killed",
            None,
            result.expired,
            True,
        )
    code = result.exit_code
    assert code is not None
    cause = environment_fault(result.output, code, judged_by)
    if code in NOT_RUNNABLE:
        why = f"tool missing or not executable (exit {code}: {NOT_RUNNABLE[code]})"
        named = f"{why}: {cause}" if cause else why
        return "error", f"error: {named}{_FAULT}", code, cause or why, cause is not None
    sig = signal_of(code)
    if sig is not None:
        killed = f"killed by signal {signal_name(sig)}"
        return "fail", killed, code, killed, False
    if cause is not None:
        return "error", f"error: {cause}{_FAULT}", code, cause, True
    reason = no_tests_reason(result.output, code, judged_by) if name == "tests" else None
    if reason is not None:
        status, note, headline, alone = _no_test_ran(reason)
        return status, note, code, headline, alone
    nothing = (
        nothing_to_format_reason(result.output, code, judged_by.tools) if name == "format" else None
    )
    if nothing is not None:
        return "not_run", f"NOT RUN: {nothing}", code, nothing, True
    return ("pass" if code == 0 else "fail"), None, code, None, False


def _no_test_ran(reason: str) -> tuple[GateStatus, str, str, bool]:
    """(status, note, headline, alone) of a tests gate whose command ran no test."""
    return "not_run", f"NOT RUN: {reason}: {NO_TEST_NOTE}", f"{reason}; {NO_TEST_NOTE}", True


def _scoped(
    command: str | None, scope: list[str] | None
) -> tuple[str | None, tuple[GateStatus, str] | None]:
    """The format command to run, its ``{files}`` given the change set, or
    why it does not run: ``(command, None)`` or ``(None, (status, why))``."""
    if command is None or not has_files_placeholder(command):
        return command, None
    if scope is None:
        return None, (
            "not_run",
            "not run: the change set is unknown outside git, so no file is given",
        )
    expanded, why = expand_files(command, scope)
    return (expanded, None) if expanded is not None else (None, ("not_run", why))


def skipped(
    name: GateName, command: str | None, plugin: str | None, status: GateStatus, why: str
) -> GateResult:
    """A gate not run, and why: a formatter given no file, a command that
    cannot run on this machine (``error``)."""
    return GateResult(
        name=name,
        status=status,
        command=command,
        plugin=plugin,
        exit_code=None,
        summary=why,
        evidence=f"{why}; the command was not run" + (f"\n$ {command}" if command else ""),
        changed_files=[],
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _unprepared(
    name: GateName, command: str, plugin: str | None, record: WorktreeRecord
) -> GateResult:
    """A gate not run because its work tree's dependencies could not be
    prepared: an environment fault, the setup's output as its evidence."""
    output = ""
    if record.setup_log:
        try:
            output = Path(record.setup_log).read_text(encoding="utf-8", errors="replace")
        except OSError:
            output = ""
    evidence = f"{record.unprepared}; the command was not run\n$ {command}"
    if output.strip():
        evidence += "\n\n[the setup's output]\n" + clip_middle(output, 4000, "setup output")
    return GateResult(
        name=name,
        status="error",
        command=command,
        plugin=plugin,
        log=record.setup_log or None,
        summary=record.unprepared,
        evidence=evidence,
        changed_files=[],
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _not_the_steps(changed: list[str], before: Listing, step: set[str]) -> list[str]:
    """Of the files a gate other than the formatter changed, those to put
    back: tracked and clean before it (git's index holds their bytes, so no
    copy is held in memory) and not among the step's files ``step``.  A file
    the step changed is the step's, whatever the gate did to it: left as the
    gate left it (and named in ``changed_files``); so is a file git does not
    track, or one that already differed from git's index before the gate."""
    return [p for p in changed if p in before.ids and p not in before.hashed and p not in step]


def _changed(before: dict[str, str], after: dict[str, str], also: Iterable[str]) -> list[str]:
    return sorted(
        {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)} | set(also)
    )


def _note_restored(result: GateResult, restored: dict[str, str], formats: bool) -> None:
    """Name what was put back in the gate's summary and evidence."""
    if not restored:
        return
    what = "file(s) it changed outside the change set" if formats else "tracked file(s) it changed"
    note = f"restored {len(restored)} {what}: {', '.join(sorted(restored))}"
    result.summary = f"{result.summary}; {note}" if result.summary else note
    lines = "\n".join(f"- {restored[p]}" for p in sorted(restored))
    result.evidence = (
        f"{result.evidence}\n\n[stepkit put back what this gate had no business "
        f"changing; each changed version is kept]\n{lines}"
    )


def _new_log(log_dir: Path, name: str) -> Path:
    """Claim ``<log_dir>/<name>-<n>.log`` with the first free n (exclusive
    create, so two runners never share a file)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        path = log_dir / f"{name}-{n}.log"
        try:
            path.open("xb").close()
            return path
        except FileExistsError:
            n += 1
