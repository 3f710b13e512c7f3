"""The step's start, measured once while the orientation and the coder work.

Once the step's start is snapshotted (the orientation), a background job rebuilds the step's
start tree in one scratch copy (:func:`~stepkit.workspace.baseline.checked_out`:
under stepkit's state directory, which no confined command sees) and runs
there, in the gates' sandbox, every gate command chosen before the step,
in the gates' order, the tests with their runner's report.  Per gate it
records a :class:`~stepkit.workspace.baseline.BaselineRecord`: it ran and
passed, it ran and failed (the failing test ids or lint keys), or it could
not run (:func:`~stepkit.workspace.baseline.could_not_run`), and for the
tests every id's outcome.  Three verdicts read those records:

- **the baseline** of a failing gate (:class:`~stepkit.workspace.verdicts.Judge`):
  no run after the failure, in the critical path;
- **test-id conservation** (:func:`lost_tests`): a test that passed at the
  start and did not run, or was skipped, after the step;
- **commands proven on the start**: a command that could not run there
  and cannot run now is the machine, not the code (an environment fault).

The records are cached in the run store, sealed, by the start tree's
content and the command (:func:`~stepkit.workspace.baseline.keep_record`),
so a later step that starts from the same files measures nothing.  The
copy is built before the coder starts, at the priority of the node that
waits for it: the coder can write ``.git/`` (its undoing waits for the
round's end), and a ``git worktree add`` during the round would run a
smudge filter it planted in ``.git/config`` and ``.git/info/attributes``
(unconfined, as stepkit's own git calls are), and the copy would hold
what the filter made of the start.  The commands then run beside the
coder at the lowest CPU priority, so on a busy machine they take what the
coder and the gates leave, until the tests gate starts or a verdict
waits for them: that thread lends them its priority (:meth:`StartMeasure.needed`).  The job
stops with its run
(:func:`~stepkit.workspace.supervision.stop_background`); what it measured
while being stopped is dropped, and a verdict that finds no record falls
back to running the command on the start then, as before.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from stepkit.records import GateResult
from stepkit.workspace import sandbox, supervision
from stepkit.workspace.baseline import (
    BaselineRecord,
    BaselineUnavailable,
    BaseTree,
    GateRun,
    baseline_record,
    cached_record,
    checked_out,
    keep_record,
    log_dir_of,
    log_text_of,
    new_record,
    test_results_of,
)
from stepkit.workspace.process import lend_priority, signal_of
from stepkit.workspace.store import baseline_dir
from stepkit.workspace.testresults import file_of

#: Runs the gates named in the rebuilt tree: (its project dir, its log dir, the gates) → results.
Measure = Callable[[Path, Path, list[str]], list[GateResult]]
#: Lists the tests gate's tests in the rebuilt tree: (its project dir, its log dir) → every
#: test id (None: they cannot be listed, :func:`~stepkit.workspace.testlisting.list_tests`).
ListTests = Callable[[Path, Path], "list[str] | None"]
#: The niceness of the job's commands: the lowest priority, so they take only idle CPU.  A fair
#: share was measured against it: it helps a suite that runs faster on one core than on two
#: and slows every other (docs/benchmarks.md).
NICENESS = 19
#: Seconds a stop waits for the job to end (its command killed, its copy removed).
STOP_WAIT_S = 30.0


class StartMeasure:
    """One measure of a start tree: started once, read by every verdict.

    :param commands: gate → the command chosen before the step.
    :param measure: runs gates in the copy (confined by ``policy``).
    :param policy: makes the sandbox policy of the job's commands (None: unconfined).
    :param listing: lists the tests gate's tests in the copy, before the
        gates run there (None: they are not listed).
    """

    def __init__(
        self,
        project_dir: Path,
        tree: BaseTree,
        commands: dict[str, str],
        measure: Measure,
        policy: Callable[[], sandbox.Policy | None],
        run_dir: str | None = None,
        listing: ListTests | None = None,
    ):
        self.project_dir, self.tree, self.commands = Path(project_dir), tree, commands
        self._measure, self._policy, self._listing = measure, policy, listing
        #: every test id of the tests gate's command at the start, listed (None: not listed)
        self.listed: list[str] | None = None
        #: the listing is over (or there is none): :attr:`listed` is what it will be
        self.listed_done = threading.Event()
        self._aside = False
        self._needed = False  # a verdict waits for the records: never aside again
        self._dies_with_stepkit = False  # its commands, stopped or not (a SIGKILL included)
        self._aside_lock = threading.Lock()
        self.records: dict[str, BaselineRecord] = {}
        self._flags: dict[str, list[str]] = {}  # a cached record found forged, per gate
        #: why the job measured nothing or not every gate (None: it did)
        self.problem: str | None = None
        #: the copy is built (or none is needed): the coder may start
        self.ready = threading.Event()
        #: its records (or problem) are whole: readers read from here
        self.measured = threading.Event()
        #: the job ended, its copy removed
        self.done = threading.Event()
        self._thread: threading.Thread | None = None  # the one measuring
        env = {supervision.RUN_VARIABLE: run_dir} if run_dir else {}
        self._watch = supervision.Supervision(env=env)

    def start(self) -> None:
        """Measure in a background thread."""
        self._thread = threading.Thread(
            target=self._work, name="stepkit-start-outcomes", daemon=True
        )
        self._thread.start()

    def run(self) -> None:
        """Measure in this thread, returning when every gate was measured
        (``stepkit init``: the project's HEAD proven before the first step)."""
        self._thread = threading.current_thread()
        self._work()

    def stop(self) -> None:
        """Refuse the job's new commands and kill its running ones; what it
        measured from now on is dropped.  Returns once the job has ended
        (at most :data:`STOP_WAIT_S`): its killed command's sweep of what it
        left behind, and the copy's removal, happen before the run that
        started it is over, never in a process that has moved on (an
        embedding program's, whose later children the sweep would take for
        the command's)."""
        self._watch.stop()
        with _LOCK:
            if _JOBS.get(_key(self.project_dir, self.tree)) is self:
                del _JOBS[_key(self.project_dir, self.tree)]
        if self._thread is not None and self._thread is not threading.current_thread():
            self.done.wait(STOP_WAIT_S)

    def needed(self) -> None:
        """A verdict of this thread reads the measure: it goes on if it had
        stepped aside (:meth:`step_aside`), and while it runs, this thread's
        priority is lent to it (:func:`~stepkit.workspace.process.lend_priority`);
        the lowest is for a measure nobody needs yet.  From then on it
        never steps aside: the verdict waits until it has measured all."""
        with self._aside_lock:
            self._needed = True
        self.come_back()
        if not self.measured.is_set() and self._thread is not None:
            lend_priority(self._thread)

    def step_aside(self) -> None:
        """A gate's tests run now: the measure's commands are paused
        (:meth:`~stepkit.workspace.supervision.Supervision.pause`) until a
        verdict needs its records (:meth:`needed`) or the gate is over
        (:meth:`come_back`), so that on a machine whose cores are all busy
        the gate runs as fast as alone.  The listing is never paused: it is
        what the verdict reads first (:func:`conserved_by_listing`), so the
        pause begins once it is over.  The gate asks from a thread of its
        own, which a loaded machine may run after the gate's verdict began
        waiting for the records: then the measure is :meth:`needed` and
        stays where it is.  A measure whose commands would outlive a stepkit
        killed with SIGKILL never steps aside, or they would stay stopped
        for good (:func:`~stepkit.workspace.sandbox.dies_with_stepkit`)."""
        with self._aside_lock:
            if self._needed or not self._dies_with_stepkit:
                return
            self._aside = True
            if self.listed_done.is_set() and not self.measured.is_set():
                self._watch.pause()

    def come_back(self) -> None:
        """The measure goes on where :meth:`step_aside` paused it."""
        with self._aside_lock:
            self._aside = False
            self._watch.resume()

    def listed_ids(self, gate: str, command: str | None) -> list[str] | None:
        """Every test id of ``gate``'s ``command`` at the start, as listed
        before the measure (None: not listed); waits for the listing, at
        this thread's priority."""
        if gate != "tests" or self.commands.get(gate) != command or self._listing is None:
            return None
        if not self.listed_done.is_set() and self._thread is not None:
            lend_priority(self._thread)
        self.listed_done.wait()
        return self.listed

    def _listing_over(self) -> None:
        with self._aside_lock:
            self.listed_done.set()
            if self._aside and not self.measured.is_set():
                self._watch.pause()

    def record(self, gate: str, command: str | None) -> BaselineRecord | None:
        """The start's record of ``gate``'s ``command``, once the job ended
        (None: it measured none); the measure is :meth:`needed` meanwhile."""
        self.needed()
        self.measured.wait()
        found = self.records.get(gate)
        return found if found is not None and found.command == command else None

    def _work(self) -> None:
        problem = None
        try:
            policy = self._policy()
            self._dies_with_stepkit = sandbox.dies_with_stepkit(policy)  # before :attr:`ready`
            with (
                supervision.supervised(self._watch),
                supervision.SUBREAPER,
                sandbox.confined(policy),
            ):
                wanted = self._from_cache()
                if "tests" not in wanted:  # no tests command, or its record was kept
                    self._listing_over()
                if wanted:
                    self._measure_in_copy(wanted)
        except BaselineUnavailable as exc:
            problem = f"the step's start could not be rebuilt: {exc}"
        except Exception as exc:  # noqa: BLE001 - a verdict then runs the start itself
            problem = f"measuring the step's start failed: {type(exc).__name__}: {exc}"
        finally:
            self._end(problem)
            self.done.set()

    def _end(self, problem: str | None = None) -> None:
        """The job has measured what it will (its records or ``problem``):
        readers stop waiting (:attr:`measured`).  Once only: what goes wrong
        after, as the copy is removed, changes nothing they read."""
        with _LOCK:
            if self.measured.is_set():
                return
            if self._watch.stopping:
                self.records, problem = {}, "the measure was stopped with its run"
            self.problem = problem
            self.ready.set()
            self.measured.set()
            self.listed_done.set()

    def _from_cache(self) -> list[str]:
        """Take the cached records; the gates still to measure."""
        wanted = []
        for gate, command in self.commands.items():
            found, flags = cached_record(self.project_dir, self.tree, gate, command)
            if found is not None:
                self.records[gate] = found.model_copy(update={"concurrent": True})
            else:
                wanted.append(gate)
                self._flags[gate] = flags
        return wanted

    def _measure_in_copy(self, gates: list[str]) -> None:
        logs = baseline_dir(self.project_dir) / "logs" / f"start-{self.tree.key[:16]}"
        with checked_out(self.tree) as where:
            self.ready.set()
            _lowest_priority()  # not before: the coder waits for the copy
            if "tests" in gates and self._listing is not None:
                try:
                    self.listed = self._listing(where, logs)
                except Exception:  # noqa: BLE001 - not listed: a verdict waits for the records
                    self.listed = None
            self._listing_over()
            for result in self._measure(where, logs, gates):
                command = self.commands.get(result.name)
                if command is None or result.command != command or self._watch.stopping:
                    continue
                if signal_of(result.exit_code) is not None:  # killed: no measure of the code
                    continue
                ran = (
                    result.status,
                    result.summary,
                    result.log,
                    log_text_of(result),
                    test_results_of(result),
                )
                log_dir = log_dir_of(self.project_dir, self.tree, result.name, command)
                record = new_record(self.tree, result.name, command, ran, where, log_dir)
                if not self._watch.stopping:
                    keep_record(self.project_dir, self.tree, record)
                self.records[result.name] = record.model_copy(
                    update={"concurrent": True, "store_flags": self._flags.get(result.name, [])}
                )
            self._end()  # before the copy is removed (tens of ms), which no reader needs


_JOBS: dict[tuple[str, str], StartMeasure] = {}
_LOCK = threading.Lock()


def _key(project_dir: Path, tree: BaseTree) -> tuple[str, str]:
    return str(Path(project_dir).resolve()), tree.key


def begin(
    project_dir: Path,
    tree: BaseTree,
    commands: dict[str, str],
    measure: Measure,
    policy: Callable[[], sandbox.Policy | None],
    run_dir: str | None = None,
    listing: ListTests | None = None,
) -> StartMeasure:
    """The measure of ``tree``: the one this process has (running or done),
    else one started now in the background and stopped with the run
    ``run_dir``.  Returns once its copy is built."""
    key = _key(project_dir, tree)
    with _LOCK:
        job = _JOBS.get(key)
        if job is None or (job.measured.is_set() and job.problem is not None):
            job = StartMeasure(project_dir, tree, commands, measure, policy, run_dir, listing)
            _JOBS[key] = job
            job.start()
            if run_dir:
                supervision.in_background(run_dir, job.stop)
    job.ready.wait()
    return job


def measured(project_dir: Path, tree: BaseTree) -> StartMeasure | None:
    """The measure of ``tree`` this process started, if any."""
    with _LOCK:
        return _JOBS.get(_key(project_dir, tree))


def start_record(
    project_dir: Path, tree: BaseTree, gate: str, command: str, run: GateRun
) -> BaselineRecord:
    """How ``gate``'s ``command`` did on ``tree``: as measured while the
    coder worked (waited for), else from the cache, else run now (``run``).

    :raises BaselineUnavailable: the tree cannot be rebuilt.
    """
    job = measured(project_dir, tree)
    found = job.record(gate, command) if job is not None else None
    if found is None:
        return baseline_record(project_dir, tree, gate, command, run)
    # the record held here decides; a cached copy forged since is named all the same
    forged = cached_record(project_dir, tree, gate, command)[1]
    return found.model_copy(update={"store_flags": [*found.store_flags, *forged]})


# -- test-id conservation ------------------------------------------------------


def lost_tests(start: BaselineRecord | None, now: GateResult) -> list[str] | None:
    """The test ids that passed at the step's start and did not pass or
    fail after it: missing, deselected, not collected, skipped or renamed
    (one that fails is the gate's failure already).  None when it cannot
    be told: no complete list of the start's outcomes, or a run now that
    did not end or reported only some of its tests."""
    before = start.outcomes() if start is not None and start.tests is not None else None
    if before is None or start is None or start.tests is None or not start.tests.complete:
        return None
    if now.status not in ("pass", "fail", "not_run"):
        return None
    after: dict[str, str] = {}
    if now.tests is not None:
        if not now.tests.complete:
            return None
        after = now.tests.outcomes() or {}
    ran = ("passed", "failed", "errored")
    return [i for i, status in before.items() if status == "passed" and after.get(i) not in ran]


def conserved_by_listing(listed: list[str] | None, now: GateResult) -> bool:
    """Every test listed at the step's start (``listed``) ran to a result
    after it: then none can be lost (:func:`lost_tests` finds none, whatever
    the start's outcomes), and the verdict need not wait for them.  False
    when that cannot be told from the list: no list, or a run now that did
    not end or reported only some of its tests."""
    if listed is None or now.status not in ("pass", "fail", "not_run"):
        return False
    if now.tests is None:
        return not listed
    after = now.tests.outcomes() if now.tests.complete else None
    if after is None:
        return False
    return all(after.get(i) in ("passed", "failed", "errored") for i in listed)


def added_by_step(project_dir: Path, tree: BaseTree, ids: Iterable[str]) -> set[str]:
    """Of ``ids``, those in a test file the step added: a file of the
    project now that the start tree did not have."""
    project = Path(project_dir)
    return {i for i in ids if (project / file_of(i)).is_file() and not tree.has(file_of(i))}


def _lowest_priority() -> None:
    """Lower this thread's CPU priority, and so that of every process it
    starts (on Linux the nice value is a thread's, and a child inherits its
    parent thread's; the session each command leads gets it too, see
    :func:`stepkit.workspace.process.run`)."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
        except OSError:
            pass
