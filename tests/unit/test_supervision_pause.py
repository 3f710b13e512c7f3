"""A supervision that pauses its commands: each is stopped where it is
(SIGSTOP to its group), one that starts meanwhile as it starts, and goes on
when resumed; the time paused counts against none of its limits.  Real
processes, their state read from /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from stepkit.workspace import filelocks, process, supervision

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc")

#: prints a line once it can be released (SIGUSR1 held for it from then on), then waits for
#: it (the shell execs it: the command's group is this one process)
BLOCKS = (
    "import signal; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1}); "
    "print('go', flush=True); signal.sigwait({signal.SIGUSR1}); print('done', flush=True)"
)


def state(pid: int) -> str:
    """The process's state letter (T: stopped)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def settles(pid: int, stopped: bool) -> bool:
    """The process is stopped (``stopped``) or running, once a signal sent to it
    took effect: one in a system call that cannot be interrupted (state D, a
    process being started) takes it when the call returns."""
    deadline = time.monotonic() + 30
    while (state(pid) == "T") != stopped:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class Command:
    """``BLOCKS`` run by process.run under ``watch`` in a thread of its own."""

    def __init__(
        self,
        tmp_path: Path,
        watch: supervision.Supervision,
        wrap: str = "",
        script: str = BLOCKS,
        **limits: float,
    ) -> None:
        self.watch = watch
        self.printed = threading.Event()
        self.result: process.ProcessResult | None = None

        def work() -> None:
            with supervision.supervised(watch):
                self.result = process.run(
                    f'{wrap} exec {sys.executable} -c "{script}"',
                    cwd=tmp_path,
                    on_text=lambda text: "go" in text and self.printed.set(),
                    **limits,
                )

        self.thread = threading.Thread(target=work, daemon=True)
        self.thread.start()

    def release(self) -> process.ProcessResult:
        assert self.printed.is_set(), "released before it could be"
        for group in self.watch.groups:
            os.killpg(group, signal.SIGUSR1)
        self.thread.join(30)
        assert self.result is not None
        return self.result


@pytest.fixture
def watch():
    """A supervision whose commands are killed when the test ends, whatever
    it asserted: none is left stopped behind a failed test."""
    watching = supervision.Supervision()
    yield watching
    watching.stop()


def group_of(watch: supervision.Supervision) -> int:
    deadline = time.monotonic() + 30
    while not watch.groups:  # registered as it starts, whatever it printed by then
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.01)
    return next(iter(watch.groups))


def test_a_paused_command_is_stopped_and_goes_on_when_resumed(tmp_path, watch):
    command = Command(tmp_path, watch)
    assert command.printed.wait(30)
    group = group_of(watch)

    watch.pause()
    assert settles(group, stopped=True)
    watch.resume()
    assert settles(group, stopped=False)

    result = command.release()
    assert result.exit_code == 0 and "done" in result.output


def test_a_command_that_starts_while_paused_is_stopped_as_it_starts(tmp_path, watch):
    watch.pause()
    command = Command(tmp_path, watch)
    group = group_of(watch)
    assert settles(group, stopped=True)

    watch.resume()
    assert command.printed.wait(30)
    assert command.release().exit_code == 0


def test_the_time_paused_counts_against_no_limit(tmp_path, watch):
    """Paused past both of its limits, the command still ends as it would
    have (the limits leave a loaded machine seconds to start it and end it)."""
    command = Command(tmp_path, watch, timeout=4.0, no_output_timeout=4.0)
    assert command.printed.wait(30)
    before = time.monotonic()
    watch.pause()
    time.sleep(4.5)  # the time under test: longer than either limit, all of it paused
    watch.resume()
    paused_for = time.monotonic() - before
    result = command.release()
    assert result.expired is None and result.exit_code == 0, result.expired
    assert paused_for - 1.0 <= watch.paused_s() <= paused_for


def test_a_stopped_supervision_is_never_paused(tmp_path, watch):
    watch.stop()
    watch.pause()
    assert not watch.paused and watch.paused_s() == 0.0


def record_lock(path: Path) -> str:
    """Python that takes an fcntl record lock on ``path`` (as SQLite locks its database)."""
    return f"import fcntl; f = open('{path}', 'a'); fcntl.lockf(f, fcntl.LOCK_EX)"


@pytest.mark.parametrize("kind", ["flock", "record"])
def test_a_paused_command_holding_a_lock_another_process_waits_for_goes_on(tmp_path, watch, kind):
    """cargo holds ``$CARGO_HOME/.package-cache`` (flock) while it resolves:
    a measure's cargo paused there would stall the gate's cargo until its
    limit.  The pause ends once another process waits for a lock a paused
    command holds: an flock (util-linux's flock holding it for its
    command), and an fcntl record lock."""
    lock = tmp_path / "lock"
    lock.touch()
    if kind == "flock":  # taken by flock(1), which is gone: the open file holds it
        command = Command(tmp_path, watch, wrap=f"exec 9>'{lock}'; flock 9;")
        waiter = ["flock", str(lock), "true"]
    else:
        command = Command(tmp_path, watch, script=f"{record_lock(lock)}; {BLOCKS}")
        waiter = [sys.executable, "-c", record_lock(lock)]
    assert command.printed.wait(30)
    group = group_of(watch)
    watch.pause()
    assert settles(group, stopped=True)

    other = subprocess.Popen(waiter)
    try:
        assert settles(group, stopped=False), "the paused holder still stalls the waiter"
        assert not watch.paused
        assert command.release().exit_code == 0
        assert other.wait(30) == 0
    finally:
        other.kill()


def test_the_files_awaited_are_read_from_the_kernels_table():
    table = (
        "1: FLOCK  ADVISORY  WRITE 6278 fe:00:465 0 EOF\n"
        "1: -> FLOCK  ADVISORY  WRITE 6326 fe:00:465 0 EOF\n"
        "2: POSIX  ADVISORY  WRITE 700 fe:00:12 0 EOF\n"  # held, nobody waits
        "3: OFDLCK ADVISORY  WRITE -1 08:01:13 0 EOF\n"
        "3: -> OFDLCK ADVISORY  WRITE -1 08:01:13 0 EOF\n"
    )
    assert filelocks.awaited_files(table) == {"fe:00:465", "08:01:13"}
