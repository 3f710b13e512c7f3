"""A stop signal's last sweep stops what the node's commands detached even
while the node's thread has not finished its own clean-up: on a loaded
machine the thread that ran a killed command can still be between the
command's end and its sweep (the command still registered, its detached
process carrying a live command's token) when the main thread sweeps and
the process exits."""

from __future__ import annotations

import shlex
import signal
import threading

from stepkit.engine import interrupts
from stepkit.engine.interrupts import stop_commands
from stepkit.workspace import process, supervision
from tests.support.crash import wait_until_gone
from tests.support.waiting import wait_until

#: a command that detaches a process into a session of its own, then lives on
DETACHING = (
    "setsid sh -c 'echo $$ > detached.tmp; mv detached.tmp detached.pid; exec sleep 300' & "
    "while [ ! -e detached.pid ]; do sleep 0.01; done; "
    'while [ "$(cat /proc/$(cat detached.pid)/comm)" != sleep ]; do sleep 0.01; done; '
    "{trap}exec sleep 300"
)


def _stop_while_the_commands_thread_is_held(tmp_path, monkeypatch, trap: str) -> list[int]:
    """Run a detaching command in a thread whose clean-up after the command
    ends is held (a thread starved by a loaded machine); stop as a SIGTERM
    does; the detached process if it outlived the stop (the process would
    exit now, its threads with it)."""
    held, release = threading.Event(), threading.Event()
    real_reap = process._reap_group

    def starved(group: int) -> None:
        held.set()
        release.wait()
        real_reap(group)

    monkeypatch.setattr(process, "_reap_group", starved)
    # the held thread never reports done: the stop waits out both of its waits
    monkeypatch.setattr(interrupts, "INTERRUPT_GRACE_S", 0.3)
    monkeypatch.setattr(interrupts, "_KILLED_WAIT_S", 0.3)
    node_done = threading.Event()

    def node() -> None:
        try:
            process.run(DETACHING.format(trap=trap), cwd=tmp_path, timeout=60)
        finally:
            node_done.set()

    thread = threading.Thread(target=node, daemon=True)
    thread.start()
    pid_file = tmp_path / "detached.pid"
    wait_until(lambda: pid_file.exists() and supervision.live_groups(), "the command's start")
    detached = int(pid_file.read_text())
    try:
        stop_commands(node_done, signal.SIGTERM)
        return wait_until_gone([detached], 0)
    finally:
        release.set()
        thread.join()


def test_a_detached_process_is_stopped_though_its_commands_thread_is_still_cleaning_up(
    tmp_path, monkeypatch
):
    assert _stop_while_the_commands_thread_is_held(tmp_path, monkeypatch, trap="") == []


def test_the_same_with_a_command_deaf_to_sigterm(tmp_path, monkeypatch):
    trap = f"trap {shlex.quote('')} TERM; "
    assert _stop_while_the_commands_thread_is_held(tmp_path, monkeypatch, trap=trap) == []
