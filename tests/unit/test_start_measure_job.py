"""The start measure's job (:mod:`stepkit.workspace.start_outcomes`): keyed
by the start tree's content, run at the lowest CPU priority, stopped with
its run leaving no process and no record behind.  Real git repos and real
processes; the gates it runs are one shell command each."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from stepkit.records import GateResult
from stepkit.workspace import process, sandbox, supervision
from stepkit.workspace.baseline import cached_record, snapshot_tree
from stepkit.workspace.scope import take_snapshot
from stepkit.workspace.start_outcomes import NICENESS, begin, lost_tests
from tests.support.gitrepo import git, init_repo
from tests.support.waiting import SAFETY_S, wait_until


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", {"a.txt": "committed\n"})


def shell_gate(command: str, stdin_text: str | None = None):
    """A measure that runs ``command`` in the copy as the tests gate."""
    return shell_gates({"tests": command}, stdin_text)


def shell_gates(commands: dict[str, str], stdin_text: str | None = None):
    """A measure that runs each gate's shell command in the copy, in the order asked."""

    def measure(where: Path, log_dir: Path, gates: list[str]) -> list[GateResult]:
        results = []
        for gate in gates:
            ran = process.run(commands[gate], cwd=where, stdin_text=stdin_text)
            results.append(
                GateResult(
                    name=gate,
                    status="pass" if ran.exit_code == 0 else "fail",
                    command=commands[gate],
                    exit_code=ran.exit_code,
                    summary=ran.output.strip(),
                    evidence=ran.output,
                )
            )
        return results

    return measure


def test_the_key_is_the_content_not_the_commit(repo):
    first = snapshot_tree(take_snapshot(repo)).key
    git(
        repo,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    assert snapshot_tree(take_snapshot(repo)).key == first
    (repo / "a.txt").write_text("changed before the step\n")
    assert snapshot_tree(take_snapshot(repo)).key != first


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's nice value is Linux's")
def test_the_commands_run_at_the_lowest_priority_and_the_record_is_cached(repo, tmp_path):
    tree = snapshot_tree(take_snapshot(repo))
    command = "cut -d' ' -f19 /proc/self/stat"
    job = begin(repo, tree, {"tests": command}, shell_gate(command), lambda: None, str(tmp_path))
    record = job.record("tests", command)
    assert record is not None and record.summary == "19" and record.concurrent
    assert cached_record(repo, tree, "tests", command)[0] is not None
    supervision.stop_background(str(tmp_path))


@pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists(), reason="a kernel without session autogroups"
)
@pytest.mark.parametrize("confined", [False, True], ids=["unconfined", "sandboxed"])
def test_the_commands_sessions_are_at_the_lowest_priority_too(confined, repo, tmp_path):
    """Each command leads a session, so a scheduler autogroup, of its own: its
    nice value alone would rank it as an equal of the gates' commands.  (No
    verdict waits for this measure: one would lend it its priority.)"""
    if confined and sandbox.unavailable() is not None:
        pytest.skip(f"no sandbox here: {sandbox.unavailable()}")
    tree = snapshot_tree(take_snapshot(repo))
    command = "read go; cat /proc/self/autogroup"  # read once the spawn is done
    policy = (lambda: sandbox.policy_for(repo, tmp_path / "store")) if confined else lambda: None
    job = begin(repo, tree, {"tests": command}, shell_gate(command, "go\n"), policy, str(tmp_path))
    assert job.done.wait(SAFETY_S)
    record = job.records["tests"]
    assert record is not None and record.summary.split()[-2:] == ["nice", "19"]
    supervision.stop_background(str(tmp_path))


def test_what_the_coder_writes_the_moment_it_starts_never_reaches_the_measured_start(
    repo, tmp_path
):
    """The coder starts once :func:`begin` returns.  At once it changes a
    committed file and one changed before the step, and plants a smudge
    filter in ``.git/config`` and ``.git/info/attributes`` that rewrites
    whatever git checks out: the measured start is the start all the same,
    and the filter never ran."""
    (repo / "b.txt").write_text("changed before the step\n")
    tree = snapshot_tree(take_snapshot(repo))
    smudged = tmp_path / "smudged"
    command = "cat a.txt b.txt"
    job = begin(repo, tree, {"tests": command}, shell_gate(command), lambda: None, None)
    for name in ("a.txt", "b.txt"):
        (repo / name).write_text("the coder's\n")
    git(repo, "config", "filter.evil.smudge", f"touch '{smudged}'; echo smudged")
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    record = job.record("tests", command)
    assert record is not None and " ".join(record.summary.split()) == (
        "committed changed before the step"
    )
    assert not smudged.exists()


class Announced(threading.Event):
    """An event whose waiters are announced: ``waiting`` is set when one begins."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.waiting.set()
        return super().wait(timeout)


def waiter_niceness() -> int:
    """This thread's niceness: what a verdict waiting in it lends the measure."""
    niceness = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    if niceness >= NICENESS:
        pytest.skip(f"this test runs at nice {niceness}: no priority above the measure's to lend")
    return niceness


def record_once_waiting(job, gate: str, command: str, release: Path):
    """``job.record(gate, command)`` from another thread; ``release`` (a FIFO
    the measure's command reads) is written once that thread waits."""
    job.measured = announced = Announced()
    found = []
    waiter = threading.Thread(target=lambda: found.append(job.record(gate, command)))
    waiter.start()
    assert announced.waiting.wait(SAFETY_S)
    release.write_text("go\n")
    waiter.join(SAFETY_S)
    return found[0]


def reporting_job(repo: Path, tmp_path: Path):
    """A measure whose tests command reports its session's niceness twice:
    once it started (read here: the lowest), then when ``release`` (a FIFO)
    is written, as its result."""
    first, release = tmp_path / "first", tmp_path / "release"
    os.mkfifo(first)
    os.mkfifo(release)
    reads = "cat /proc/self/autogroup"
    command = f"read go; {reads} > '{first}'; read go < '{release}'; {reads}"
    tree = snapshot_tree(take_snapshot(repo))
    job = begin(repo, tree, {"tests": command}, shell_gate(command, "go\n"), lambda: None, None)
    assert first.read_text().split()[-2:] == ["nice", str(NICENESS)]
    return job, command, release


@pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists(), reason="a kernel without session autogroups"
)
def test_a_verdict_that_waits_lends_its_priority_to_the_running_command(repo, tmp_path):
    """The measure idles at the lowest priority while nobody needs it; once
    a verdict waits for it, starving it behind the gates and other load
    only delays that verdict: its running command's session is raised to
    the waiter's niceness.  The command reads its session's niceness before
    anyone waits (a FIFO the test reads) and once someone does."""
    expected = waiter_niceness()
    job, command, release = reporting_job(repo, tmp_path)
    record = record_once_waiting(job, "tests", command, release)
    assert record is not None and record.summary.split()[-2:] == ["nice", str(expected)]


@pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists(), reason="a kernel without session autogroups"
)
def test_a_measure_the_tests_gate_needs_runs_at_its_priority_before_anyone_waits(repo, tmp_path):
    """The tests gate starts: the coder's round is over and its verdict will
    need the measure, so from then on the measure runs at the gate's
    priority, not only once the verdict waits (by then a measure starved
    behind the gate's own run, on a suite of 20 s, is seconds behind it)."""
    expected = waiter_niceness()
    job, command, release = reporting_job(repo, tmp_path)
    job.needed()
    release.write_text("go\n")
    assert job.done.wait(SAFETY_S)
    record = job.record("tests", command)  # ended: nothing is lent here
    assert record is not None and record.summary.split()[-2:] == ["nice", str(expected)]


@pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists(), reason="a kernel without session autogroups"
)
def test_a_command_the_measure_starts_after_the_wait_began_is_not_lowered(repo, tmp_path):
    """Lint, then tests: the wait begins while lint runs; the tests command,
    started after, runs at the waiter's priority from its start."""
    expected = waiter_niceness()
    release = tmp_path / "release"
    os.mkfifo(release)
    commands = {"lint": f"read go < '{release}'", "tests": "read go; cat /proc/self/autogroup"}
    tree = snapshot_tree(take_snapshot(repo))
    job = begin(repo, tree, commands, shell_gates(commands, "go\n"), lambda: None, None)
    record = record_once_waiting(job, "tests", commands["tests"], release)
    assert record is not None and record.summary.split()[-2:] == ["nice", str(expected)]


def test_a_measure_stopped_with_its_run_leaves_no_process_and_no_record(repo, tmp_path):
    tree = snapshot_tree(take_snapshot(repo))
    pid_file = tmp_path / "pid"
    command = f"echo $$ > '{pid_file}'; exec sleep 300"
    job = begin(repo, tree, {"tests": command}, shell_gate(command), lambda: None, str(tmp_path))
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), "the command's pid")
    pid = int(pid_file.read_text())
    supervision.stop_background(str(tmp_path))
    # ended when the stop returns: its sweep and the copy's removal never outlive the run
    assert job.done.is_set()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert job.record("tests", command) is None
    assert job.problem == "the measure was stopped with its run"
    assert cached_record(repo, tree, "tests", command) == (None, [])
    assert git(repo, "worktree", "list").count("\n") == 1  # the copy is gone


def test_a_test_lost_after_the_step_is_one_that_held_at_the_start(repo, tmp_path):
    from stepkit.workspace.baseline import BaselineRecord
    from stepkit.workspace.testresults import TestResults

    start = TestResults(source="junit XML")
    for test_id, status in (("t::held", "passed"), ("t::kept", "passed"), ("t::old", "failed")):
        start.add(test_id, status)  # type: ignore[arg-type]
    record = BaselineRecord(
        gate="tests",
        command="c",
        tree="k",
        label="the step's start",
        status="fail",
        tests=start.record(tmp_path / "start.json"),
    )
    after = TestResults(source="junit XML", outcomes={"t::kept": "failed", "t::held": "skipped"})
    now = GateResult(name="tests", status="fail", tests=after.record(tmp_path / "now.json"))
    assert lost_tests(record, now) == ["t::held"]  # a failure is the gate's already
    partial = TestResults(source="output", complete=False, outcomes={"t::kept": "failed"})
    unknown = GateResult(name="tests", status="fail", tests=partial.record(tmp_path / "p.json"))
    assert lost_tests(record, unknown) is None


def test_a_record_kept_by_another_stepkit_is_not_read(repo, tmp_path, monkeypatch):
    """A record says how a stepkit read the output; one whose code reads it
    otherwise (an upgrade, an edited plugin) measures again."""
    from stepkit.workspace import baseline

    tree = snapshot_tree(take_snapshot(repo))
    command = "echo '1 passed in 0.01s'"
    job = begin(repo, tree, {"tests": command}, shell_gate(command), lambda: None, str(tmp_path))
    assert job.record("tests", command) is not None
    supervision.stop_background(str(tmp_path))
    assert cached_record(repo, tree, "tests", command)[0] is not None
    monkeypatch.setattr(baseline, "judge_version", lambda: "another stepkit")
    assert cached_record(repo, tree, "tests", command) == (None, [])


def test_the_records_are_read_before_the_copy_is_removed(repo, tmp_path, monkeypatch):
    """A verdict waits for the measure's records, not for the removal of its
    scratch copy (a worktree: tens of milliseconds in the critical path)."""
    import contextlib

    from stepkit.workspace import start_outcomes

    real, removing, removed = start_outcomes.checked_out, threading.Event(), threading.Event()

    @contextlib.contextmanager
    def held_removal(tree):
        with real(tree) as where:
            yield where
            removing.wait(SAFETY_S)  # the copy stays until the test lets it go
        removed.set()

    monkeypatch.setattr(start_outcomes, "checked_out", held_removal)
    tree = snapshot_tree(take_snapshot(repo))
    job = begin(
        repo, tree, {"tests": "echo ok"}, shell_gate("echo ok"), lambda: None, str(tmp_path)
    )
    try:
        record = job.record("tests", "echo ok")
        assert record is not None and record.summary == "ok"
        assert not removed.is_set()
    finally:
        removing.set()
    assert removed.wait(SAFETY_S)
    supervision.stop_background(str(tmp_path))


def test_a_step_aside_asked_after_the_verdict_began_waiting_never_stalls_it(repo, tmp_path):
    """The gate's tests start; the measure is told to step aside from a
    thread of its own, which a loaded machine may run late: after the
    verdict of the same gate began waiting for the records.  The verdict
    needs the measure: it goes on to the end, and the verdict gets them.
    (Sandboxed: only a measure whose commands die with stepkit steps aside.)"""
    if sandbox.unavailable() is not None:
        pytest.skip(f"no sandbox here: {sandbox.unavailable()}")
    started, release = tmp_path / "started", tmp_path / "release"
    os.mkfifo(started)
    os.mkfifo(release)
    command = f"echo go > '{started}'; read go < '{release}'; echo measured"
    tree = snapshot_tree(take_snapshot(repo))
    policy = lambda: sandbox.policy_for(repo, tmp_path / "store")
    job = begin(repo, tree, {"tests": command}, shell_gate(command), policy, None)
    assert started.read_text() == "go\n"
    job.measured = announced = Announced()
    found = []
    verdict = threading.Thread(target=lambda: found.append(job.record("tests", command)))
    verdict.start()
    assert announced.waiting.wait(SAFETY_S)
    job.step_aside()  # late
    threading.Thread(target=lambda: release.write_text("go\n"), daemon=True).start()
    try:
        verdict.join(SAFETY_S)
        assert found and found[0] is not None and found[0].summary == "measured"
    finally:
        job.stop()  # a stalled measure's command is not left stopped


def test_an_unconfined_measure_never_steps_aside(repo, tmp_path):
    """A stopped process outlives a stepkit killed with SIGKILL: a sandboxed
    command dies with it (bwrap ``--die-with-parent``), an unconfined one
    would stay stopped for good.  So only a confined measure steps aside;
    an unconfined one runs on while the gate's tests run."""
    release, pid_file = tmp_path / "release", tmp_path / "pid"
    os.mkfifo(release)
    command = f"echo $$ > '{pid_file}'; read go < '{release}'; echo measured"
    tree = snapshot_tree(take_snapshot(repo))
    job = begin(repo, tree, {"tests": command}, shell_gate(command), lambda: None, None)
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), "the command's pid")
    job.step_aside()
    threading.Thread(target=lambda: release.write_text("go\n"), daemon=True).start()
    try:
        assert job.measured.wait(SAFETY_S), "the unconfined measure was stopped"
        assert job.records["tests"].summary == "measured"
    finally:
        job.stop()
