"""Waiting for a command wakes when it exits, not on a sleep-poll: with a
time limit set (so the wait has a deadline), the caller's thread never
sleeps while the command runs, and a limit still ends a command that
outlives it.  Synchronised on a FIFO the command blocks on, not on time."""

from __future__ import annotations

import os
import shlex
import sys
import threading
import time

import pytest

from stepkit.workspace import process

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux)")


@pytest.fixture
def sleeps(monkeypatch):
    """The threads that called time.sleep (subprocess's wait polls with it)."""
    callers: list[str] = []
    real = time.sleep

    def counted(seconds: float) -> None:
        callers.append(threading.current_thread().name)
        real(seconds)

    monkeypatch.setattr(time, "sleep", counted)
    return callers


def test_the_wait_wakes_on_exit_without_sleeping(tmp_path, sleeps):
    fifo = tmp_path / "release"
    os.mkfifo(fifo)
    results: list[process.ProcessResult] = []
    waiter = threading.Thread(
        name="waiter",
        target=lambda: results.append(
            process.run(
                f"read line < {shlex.quote(str(fifo))}; exit 7",
                cwd=tmp_path,
                timeout=600,
                no_output_timeout=600,
            )
        ),
    )
    waiter.start()
    with open(fifo, "w") as release:  # opens once the command reads: it is running
        _until_waiting(waiter)
        release.write("go\n")
    waiter.join()
    assert [r.exit_code for r in results] == [7]
    assert "waiter" not in sleeps


def _until_waiting(thread: threading.Thread) -> None:
    """Return once ``thread`` is inside the runner's wait for the command."""
    while True:
        frame = sys._current_frames().get(thread.ident)
        while frame is not None:
            if frame.f_code is process._wait.__code__:
                return
            frame = frame.f_back
        time.sleep(0.001)  # this thread's, not the waiter's


def test_a_limit_still_ends_a_command_that_outlives_it(tmp_path, sleeps):
    run = process.run("exec sleep 600", cwd=tmp_path, timeout=0.2)
    assert run.expired == "timed out after 0.2 s"
    assert run.exit_code is not None and run.exit_code < 0
    assert threading.current_thread().name not in sleeps


def test_a_fake_process_falls_back_to_its_own_wait(tmp_path, fp):
    fp.register("tool --go", stdout="done\n", returncode=4)
    run = process.run("tool --go", cwd=tmp_path, timeout=30)
    assert (run.exit_code, run.output) == (4, "done\n")
