"""Time limits and Ctrl-C while a node runs.

A node runs in a worker thread (:func:`call_with_timeout`) so the main
thread can enforce its time limit and still take Ctrl-C; on Ctrl-C the
commands the node started are stopped (:func:`stop_commands`) and the
driver saves the run as interrupted (:class:`RunInterrupted`).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from stepkit.engine.pause import resume_command
from stepkit.records import StageContext
from stepkit.workspace.process import own_group, signal_group

#: Seconds an interrupted node gets to clean up after its commands got SIGINT.
INTERRUPT_GRACE_S = 5.0


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: the checkpoint was saved as ``interrupted``."""

    def __init__(self, run_id: str, project_dir: str):
        super().__init__(run_id)
        self.run_id = run_id
        self.project_dir = project_dir

    @property
    def resume_command(self) -> str:
        """The command that continues the run."""
        return resume_command(self.run_id, self.project_dir)


class NodeTimeout(Exception):
    """The node's call did not return within its time limit."""


def call_with_timeout(fn: Callable[[StageContext], Any], ctx: StageContext, timeout: float, nid: str) -> Any:
    """Call ``fn(ctx)`` in a worker thread and wait at most ``timeout`` seconds.

    A timed-out call cannot be killed: its thread is abandoned (a daemon; the
    stage's own subprocesses carry their own time limits).  The wait is in
    the main thread, so Ctrl-C still interrupts it; the commands the node
    started are then stopped (:func:`stop_commands`).

    :raises NodeTimeout: the call did not return in time.
    """
    if timeout <= 0:
        raise NodeTimeout()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn(ctx)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name=f"stepkit-{nid}", daemon=True)
    before = child_groups()
    thread.start()
    try:
        thread.join(timeout)
    except KeyboardInterrupt:
        stop_commands(thread, before)
        raise
    if thread.is_alive():
        raise NodeTimeout()
    if "error" in box:
        raise box["error"]
    return box["value"]


def stop_commands(worker: threading.Thread, before: set[int]) -> None:
    """Ctrl-C during a node: stop the commands it started.

    Gates, coders and reviewers run their commands in a new session, so the
    terminal's SIGINT never reaches them and, unstopped, they outlive stepkit
    (a coder still editing the tree after "interrupted").  Each process group
    led by a child started during the node gets the SIGINT the terminal
    would have sent; the node gets :data:`INTERRUPT_GRACE_S` to clean up
    after its commands; what is left gets SIGKILL.
    """
    groups = child_groups() - before
    for group in groups:
        signal_group(group, signal.SIGINT)
    if groups:
        try:
            worker.join(INTERRUPT_GRACE_S)
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: stop waiting
    for group in groups & child_groups():
        signal_group(group, signal.SIGKILL)


def child_groups() -> set[int]:
    """The process groups this process's own children lead (Linux
    ``/proc/self/task/*/children``; elsewhere none are known)."""
    children: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return children
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children", encoding="ascii") as fh:
                children.update(int(pid) for pid in fh.read().split())
        except OSError:
            continue
    return {pid for pid in children if own_group(pid)}
