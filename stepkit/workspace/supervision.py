"""Which processes stepkit's commands started, so none outlives its command
or an interrupted run.

Every command :func:`stepkit.workspace.process.run` starts is registered
here while it runs (:func:`live_groups`) and carries a token of its own in
its environment (``STEPKIT_COMMAND_ID``), which its descendants inherit.
Killing a command's process group misses a descendant that left the group
(``setsid``, a double fork into a new session); with this process as the
subreaper (Linux ``PR_SET_CHILD_SUBREAPER``, set while commands run) such a
process becomes a child of this one once its parent is gone, so it is found
among this process's children by its token and stopped
(:func:`stop_detached`).  Other systems have no ``/proc``: nothing is found
there.

A caller says how it wants to hear about what was stopped, adds to the
commands' environment and can stop new commands from starting, through a
:class:`Supervision` it sets for its thread (:func:`supervised`); the
engine sets one per node, naming the run (``STEPKIT_RUN_DIR``), so that
what a SIGKILLed stepkit left running is found by its resume
(:func:`stop_leftovers`).
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

#: The environment variable that carries a command's token to its descendants.
TOKEN_VARIABLE = "STEPKIT_COMMAND_ID"
#: The environment variable that names the run (its directory) a command is part of.
RUN_VARIABLE = "STEPKIT_RUN_DIR"
#: Rounds of :func:`stop_detached`: each stopped process's own detached
#: children become this process's children, and the next round finds them.
_ROUNDS = 8


@dataclass(frozen=True)
class DetachedProcess:
    """A process a command left running outside its process group, stopped."""

    pid: int
    command: str

    def note(self) -> str:
        """The line the command's output gets."""
        return f"[stepkit: stopped a detached process the command left running: pid {self.pid} ({self.command})]"


@dataclass
class Supervision:
    """How the commands started in one thread are supervised.

    :ivar on_detached: told ``(command, stopped)`` when a command ended and
        detached processes it left were stopped.
    :ivar env: added to each command's environment.
    :ivar stopping: set when the caller is being stopped: a command that
        would start now is refused.
    """

    on_detached: Callable[[str, tuple[DetachedProcess, ...]], None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    stopping: bool = False


_SUPERVISION: ContextVar[Supervision | None] = ContextVar("stepkit_supervision", default=None)


@contextmanager
def supervised(supervision: Supervision) -> Iterator[Supervision]:
    """Supervise the commands this thread starts in the block with ``supervision``."""
    reset = _SUPERVISION.set(supervision)
    try:
        yield supervision
    finally:
        _SUPERVISION.reset(reset)


def current() -> Supervision | None:
    """The supervision of this thread's commands, if a caller set one."""
    return _SUPERVISION.get()


@dataclass
class _Registry:
    lock: threading.Lock = field(default_factory=threading.Lock)
    groups: dict[str, int | None] = field(default_factory=dict)
    counter: Iterator[int] = field(default_factory=itertools.count)


_LIVE = _Registry()


def new_token() -> str:
    """A token no other command of any process has: this pid and a serial number."""
    return f"{os.getpid()}-{next(_LIVE.counter)}"


def register(token: str, group: int | None) -> None:
    """A command with ``token`` started; ``group`` is its verified own group, if any."""
    with _LIVE.lock:
        _LIVE.groups[token] = group


def unregister(token: str) -> None:
    """The command with ``token`` ended."""
    with _LIVE.lock:
        _LIVE.groups.pop(token, None)


def live_groups() -> set[int]:
    """The process groups of the commands running now."""
    with _LIVE.lock:
        return {group for group in _LIVE.groups.values() if group is not None}


def stop_detached(token: str | None = None) -> tuple[DetachedProcess, ...]:
    """SIGKILL and reap the detached processes the command with ``token``
    left running (None: those of every command this process started), with
    their process groups; return what was stopped."""
    mine = f"{os.getpid()}-"
    stopped: list[DetachedProcess] = []
    for _ in range(_ROUNDS):
        found = [pid for pid in _children()
                 if (tag := _token_of(pid)) is not None
                 and (tag == token if token is not None else tag.startswith(mine))]
        if not found:
            break
        for pid in found:
            stopped.append(DetachedProcess(pid, _command_line(pid)))
            _kill(pid)
        for pid in found:
            _reap(pid)
    return tuple(stopped)


def stop_leftovers(run_dir: str) -> tuple[DetachedProcess, ...]:
    """SIGKILL every other process whose environment names ``run_dir`` as
    its run (what a killed stepkit's commands left running), with their
    process groups; return what was stopped."""
    entry = f"{RUN_VARIABLE}={run_dir}".encode()
    found = [pid for pid in _all_pids() if pid != os.getpid() and entry in _environment(pid)]
    stopped = tuple(DetachedProcess(pid, _command_line(pid)) for pid in found)
    for pid in found:
        _kill(pid)
    return stopped


def _all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _children() -> list[int]:
    """This process's children (every thread's: ``/proc/self/task/*/children``)."""
    children: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return children
    for tid in tasks:
        try:
            children.extend(int(pid) for pid in Path(f"/proc/self/task/{tid}/children").read_text().split())
        except OSError:
            continue
    return children


def _environment(pid: int) -> list[bytes]:
    """The ``NAME=value`` entries a process was started with (none when unreadable)."""
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []


def _token_of(pid: int) -> str | None:
    """The ``STEPKIT_COMMAND_ID`` a process was started with (None: none, or unreadable)."""
    prefix = f"{TOKEN_VARIABLE}=".encode()
    for entry in _environment(pid):
        if entry.startswith(prefix):
            return entry[len(prefix):].decode("ascii", "replace")
    return None


def _command_line(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part) or "?"


def _kill(pid: int) -> None:
    """SIGKILL the process's group when it leads one (a ``setsid`` made it),
    else the process."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pid: int) -> None:
    """Reap the killed child and what it left in its group (handed to this
    process as their subreaper)."""
    for target in (pid, -pid):
        while True:
            try:
                os.waitpid(target, 0)
            except ChildProcessError:
                break
            if target > 0:
                break
