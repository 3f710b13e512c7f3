"""How the tests gate runs its command: with the report its runner is asked
for, and narrowed to the failing ids on a re-run.

:func:`report_invocation` recognises the command's runner among the
declared ones (:mod:`stepkit.workspace.runners`; also behind a script
runner's ``test`` script, and behind the launchers a runner declares) and
lets it add its report flags or variables, writing into a directory of the
run's logs (never the project tree); the ambient report (asked of every
command, whatever its runner) comes first.  :func:`rerun_invocation` asks
the runner to select the failing ids only, or says it cannot.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stepkit.records import Evidence
from stepkit.workspace import testresults as tr
from stepkit.workspace.faults import tests_ran
from stepkit.workspace.runners import (
    Call,
    Listing,
    Reader,
    Report,
    Rerun,
    Runners,
    TestRunner,
    last_words,
    runners,
)
from stepkit.workspace.testresults import TestResults

#: Words in front of a runner that are skipped to find it, whatever the runner.
_WRAPPERS = frozenset({"run", "exec", "env", "time", "nice", "-m", "--"})
#: Why a tests gate that exited 0 is NOT RUN when nothing shows a test ran.
NO_RUNNER_SEEN = "no test runner's summary or report in its output"


@dataclass
class TestInvocation:
    """A tests command as stepkit runs it.

    :ivar command: the shell command to run.
    :ivar env: variables added to the environment.
    :ivar runner: the runner recognised (``pytest``, ``jest`` …), None if none.
    :ivar note: one line for the evidence saying what stepkit asked for.
    :ivar report: the report the recognised runner writes whenever it runs
        (None: none is required); a run that exits 0 without it verified no
        test (:meth:`ran_no_test`).
    :ivar judged_by: the runners whose summaries tell that a test ran.
    """

    __test__ = False

    command: str
    env: dict[str, str] = field(default_factory=dict)
    runner: str | None = None
    note: str | None = None
    reader: Reader | None = None
    report: Path | None = None
    judged_by: Runners | None = None
    #: where the runner writes its report: the one place of the run store a
    #: confined tests command may write
    report_dir: Path | None = None

    def ran_no_test(self, output: str, results: TestResults | None) -> str | None:
        """Why a run that exited 0 verified no test (None: it did): it printed
        nothing, its runner never wrote the report it was asked for (it was
        stopped before reporting, or replaced), the report of the runner
        the command is holds no test that passed, or nothing shows that a
        test ran at all — no report with a test in it and no runner's
        closing summary in the output (a linter or a type checker chosen
        for the tests gate: its name proves nothing)."""
        if self.report is not None and not _written(self.report):
            return (
                f"{self.runner} wrote no report (stepkit asked for {self.report.name}): "
                "it stopped before reporting, so no test it ran can be verified"
            )
        if not output.strip():
            return "the command printed nothing (exit 0)"
        counts = results.counts() if results is not None else None
        ran = counts is not None and bool(counts["passed"] or counts["failed"] or counts["errored"])
        if results is not None and counts is not None and results.complete and self.runner:
            if ran:
                return None
            if counts["skipped"]:
                return f"{results.source}: every test was skipped ({counts['skipped']} skipped, 0 passed)"
            return f"{results.source}: the report lists no test"
        # a command stepkit does not know may run more than a report saw: its runner's word will do
        if ran or tests_ran(output, self.judged_by):
            return None
        return NO_RUNNER_SEEN

    def results(self, output: tr.Output, evidence: Evidence) -> TestResults | None:
        """The per-test results of the run: the report (or the runner's
        per-test text), else the failing tests of the condensed evidence."""
        found = self.reader(output, evidence) if self.reader is not None else None
        return found or tr.failing_of(evidence)


def report_invocation(
    command: str,
    project_dir: Path,
    report_dir: Path,
    base_env: Mapping[str, str] | None = None,
    judged_by: Runners | None = None,
) -> TestInvocation:
    """``command`` as the tests gate runs it, asking its runner for a report in
    ``report_dir`` (created here).

    :param base_env: the environment the command would get (default: this
        process's), whose variables the runners extend.
    :param judged_by: the declared runners (default: the built-in ones).
    """
    table = judged_by or runners()
    report_dir.mkdir(parents=True, exist_ok=True)
    call, runner = _recognise(command, Path(project_dir), report_dir, base_env, table)
    report = _ambient(call, table)
    if runner is None or not runner.ambient_required:
        report.report = None  # the ambient report is required of its own runner only
    if runner is not None and runner.report is not None:
        report = runner.report(call, report)
    return TestInvocation(
        report.command,
        report.env,
        runner.name if runner is not None else None,
        report.note,
        report.reader,
        report.report,
        table,
        report_dir=report_dir,
    )


def listing_invocation(
    command: str,
    project_dir: Path,
    report_dir: Path,
    base_env: Mapping[str, str] | None = None,
    judged_by: Runners | None = None,
) -> Listing | None:
    """``command`` asked to list its tests (:attr:`TestRunner.listing`);
    None when its runner cannot be asked, or none is recognised."""
    table = judged_by or runners()
    report_dir.mkdir(parents=True, exist_ok=True)
    call, runner = _recognise(command, Path(project_dir), report_dir, base_env, table)
    if runner is None or runner.listing is None:
        return None
    return runner.listing(call)


def rerun_invocation(
    command: str,
    project_dir: Path,
    report_dir: Path,
    failing: list[str],
    base_env: Mapping[str, str] | None = None,
    suite: list[str] | None = None,
    judged_by: Runners | None = None,
) -> TestInvocation | None:
    """``command`` narrowed to the ``failing`` ids, reporting into ``report_dir``;
    None when stepkit does not know how to select tests of this runner.

    The selected tests run in the suite's order.  Given ``suite`` (every id
    of the run), a runner may deselect all the others by id, so exactly
    those run; else a selection may run a few more tests than asked: only
    the asked ids' results are read from it."""
    if not failing:
        return None
    table = judged_by or runners()
    project = Path(project_dir)
    base = report_invocation(command, project, report_dir, base_env, table)
    call, runner = _recognise(command, project, report_dir, base_env, table)
    if runner is None:
        runner = next((r for r in table.declared if r.claims and r.claims(failing)), None)
    if runner is None or runner.rerun is None:
        return None
    asked = Report(base.command, base.env, base.reader, base.report, base.note)
    narrowed = runner.rerun(Rerun(call, asked, failing, suite or []))
    if narrowed is None:
        return None
    base.command, base.env, base.reader, base.note = (
        narrowed.command,
        narrowed.env,
        narrowed.reader,
        narrowed.note,
    )
    return base


def files_invocation(
    command: str,
    project_dir: Path,
    report_dir: Path,
    files: list[str],
    base_env: Mapping[str, str] | None = None,
    judged_by: Runners | None = None,
) -> TestInvocation | None:
    """``command`` running only the test ``files`` (a process of their own);
    None when its runner cannot (:func:`runs_files`)."""
    table = judged_by or runners()
    if not runs_files(command, project_dir, files, table):
        return None
    return rerun_invocation(command, project_dir, report_dir, files, base_env, None, table)


def runs_files(
    command: str, project_dir: Path, files: list[str], judged_by: Runners | None = None
) -> bool:
    """The runner of ``command`` (else the one that claims ``files``, as a
    re-run's) runs test files alone
    (:attr:`~stepkit.workspace.runners.TestRunner.runs_files`)."""
    table = judged_by or runners()
    runner = _recognise(command, Path(project_dir), Path(project_dir), None, table)[1]
    if runner is None:
        runner = next((r for r in table.declared if r.claims and r.claims(files)), None)
    return runner is not None and runner.runs_files


def _ambient(call: Call, table: Runners) -> Report:
    """The report every tests command is asked for, whatever its runner."""
    report = Report(call.command)
    for runner in table.declared:
        if runner.ambient is not None:
            asked = runner.ambient(call)
            report = Report(
                call.command,
                {**report.env, **asked.env},
                asked.reader or report.reader,
                asked.report,
                asked.note or report.note,
            )
    return report


# -- recognising the runner --------------------------------------------------


def _recognise(
    command: str,
    project: Path,
    report_dir: Path,
    base_env: Mapping[str, str] | None,
    table: Runners,
    depth: int = 0,
) -> tuple[Call, TestRunner | None]:
    """(the command as a runner sees it, its runner: None when it pipes or
    the runner is not a declared one)."""
    started = time.time() - 1

    def call(words: list[str], at: int, via: str | None = None, pass_on: Any = None) -> Call:
        return Call(command, words, at, via, pass_on, project, report_dir, base_env, started)

    words = last_words(command)
    if words is None:
        return call([], 0), None
    for at, word in enumerate(words):
        following = [os.path.basename(word), *words[at + 1 :]]
        runner = table.of_command(following)
        if runner is not None:
            return call(words, at), runner
        script = table.script_runner(following[0])
        if script is not None and depth == 0:
            behind = script.script(following, project) if script.script else None
            inner = (
                _recognise(behind, project, report_dir, base_env, table, depth + 1)[1]
                if behind
                else None
            )
            if inner is not None and inner.behind_scripts:
                return call(words, at, following[0], script.pass_on), inner
            return call(words, 0), None
        if not (
            following[0] in _WRAPPERS
            or following[0] in table.launchers
            or "=" in word
            or word.startswith("-")
            or word.isdigit()
        ):
            return call(words, 0), None
    return call(words, 0), None


def _written(report: Path) -> bool:
    """The report exists and holds something."""
    try:
        return report.stat().st_size > 0
    except OSError:
        return False


def either(*readers: Reader | None) -> Reader:
    """A reader asking each of ``readers`` in turn; the first answer wins."""

    def read(output: tr.Output, evidence: Evidence) -> TestResults | None:
        for reader in readers:
            found = reader(output, evidence) if reader is not None else None
            if found is not None:
                return found
        return None

    return read


def fresh_junit(
    paths: list[Path], since: float, project: Path, case_id: tr.CaseId = tr.junit_id
) -> TestResults | None:
    """JUnit files written by this run (older ones are a previous run's)."""
    fresh = []
    for path in paths:
        try:
            if path.stat().st_mtime >= since:
                fresh.append(path)
        except OSError:
            continue
    return tr.read_junit(sorted(fresh), project, case_id) if fresh else None
