"""Which processes stepkit's commands started, so none outlives its command,
its node or an interrupted run.

Every command :func:`stepkit.workspace.process.run` starts is registered
here while it runs (:func:`live_groups`) and carries a token of its own in
its environment (``STEPKIT_COMMAND_ID``), which its descendants inherit.
Killing a command's process group misses a descendant that left the group
(``setsid``, a double fork into a new session).  While commands and nodes
run, this process is the child subreaper of its descendants (Linux
``PR_SET_CHILD_SUBREAPER``, as tini and systemd use it: :data:`SUBREAPER`),
so such a process becomes a child of this one once its parent is gone,
whatever it did to its session or its environment.  When a command ends,
:func:`stop_detached` finds those children and ends them with all their
descendants: the ones carrying the command's token, and the ones that
carry none (``env -i``) but started after the command did.  A node's end
ends what is left of everything it started (:func:`stop_detached` with
``since``: the node's start).  This process's children are found and
dated by their start in ``/proc``; psutil, imported only then, enumerates
the descendants of a process being stopped, and stands in where there is
no ``/proc``.  Systems without ``/proc`` have no subreaper: nothing is found
there.

A caller says how it wants to hear about what was stopped, adds to the
commands' environment and can stop new commands from starting, through a
:class:`Supervision` it sets for its thread (:func:`supervised`); the
engine sets one per node, naming the run (``STEPKIT_RUN_DIR``), so that
what a SIGKILLed stepkit left running is found by its resume
(:func:`stop_leftovers`).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import NamedTuple

from stepkit.workspace import filelocks

#: The environment variable that carries a command's token to its descendants.
TOKEN_VARIABLE = "STEPKIT_COMMAND_ID"
#: The environment variable that names the run (its directory) a command is part of.
RUN_VARIABLE = "STEPKIT_RUN_DIR"
#: Seconds between two looks, while paused, for a lock a paused command holds
#: and another process waits for (:meth:`Supervision.pause`).
LOCK_LOOK_S = 0.05
#: Rounds of :func:`stop_detached`: each stopped process's own detached
#: children become this process's children, and the next round finds them.
_ROUNDS = 8


# plain classes, not dataclasses: a verify's head start imports this module before
# its first gate, and dataclasses (inspect, dis) would take longer than the tree's reads


class DetachedProcess(NamedTuple):
    """A process a command left running outside its process group, stopped."""

    pid: int
    command: str

    def note(self) -> str:
        """The line the command's output gets."""
        return f"[stepkit: stopped a detached process the command left running: pid {self.pid} ({self.command})]"


class Supervision:
    """How the commands started in one thread are supervised.

    :ivar on_detached: told ``(command, stopped)`` when a command ended and
        detached processes it left were stopped.
    :ivar env: added to each command's environment.
    :ivar stopping: set when the caller is being stopped: a command that
        would start now is refused.
    :ivar groups: the verified process groups of its running commands.
    :ivar paused: its commands are stopped (:meth:`pause`) until :meth:`resume`.
    """

    def __init__(
        self,
        on_detached: Callable[[str, tuple[DetachedProcess, ...]], None] | None = None,
        env: dict[str, str] | None = None,
    ):
        self.on_detached = on_detached
        self.env: dict[str, str] = {} if env is None else env
        self.stopping = False
        #: the process groups of the commands running under it now
        self.groups: set[int] = set()
        self.paused = False
        self._paused_s = 0.0
        self._paused_at: float | None = None
        self._resumed = threading.Event()  # the current pause is over

    def stop(self) -> None:
        """Refuse new commands and SIGKILL the running ones' groups (each
        command then stops what it detached as it ends)."""
        with _LIVE.lock:  # ordered with register(): a command registered after is killed there
            self.stopping = True
            groups = list(self.groups)
        for group in groups:
            _kill_group(group)

    def pause(self) -> None:
        """Stop its running commands where they are (SIGSTOP to their
        groups), and each command that starts from now on as it starts,
        until :meth:`resume`: the work gives its CPU back without losing
        what it did.  The time paused does not count against a command's
        limits (:meth:`paused_s`).  A paused command that holds a file lock
        another process waits for would stall that process too (cargo's
        package cache): then the pause is over (:meth:`resume`)."""
        with _LIVE.lock:  # ordered with register() and resume(): no group is left stopped
            if self.paused or self.stopping:
                return
            self.paused, self._paused_at = True, time.monotonic()
            self._resumed = resumed = threading.Event()
            for group in self.groups:
                _signal_group(group, signal.SIGSTOP)
        threading.Thread(
            target=self._end_if_awaited, args=(resumed,), name="stepkit-pause", daemon=True
        ).start()

    def _end_if_awaited(self, resumed: threading.Event) -> None:
        while not resumed.wait(LOCK_LOOK_S):
            files = filelocks.awaited_files()
            if files and self._holds_lock_on(files):
                self.resume()
                return

    def _holds_lock_on(self, files: set[str]) -> bool:
        """A process of its commands' groups holds a lock on one of ``files``."""
        with _LIVE.lock:
            groups = set(self.groups)
        return any(
            _group_of(pid) in groups and filelocks.holds_lock_on(pid, files) for pid in _all_pids()
        )

    def resume(self) -> None:
        """Let the commands :meth:`pause` stopped go on (SIGCONT)."""
        with _LIVE.lock:
            if not self.paused:
                return
            self.paused = False
            self._resumed.set()
            if self._paused_at is not None:
                self._paused_s += time.monotonic() - self._paused_at
                self._paused_at = None
            for group in self.groups:
                _signal_group(group, signal.SIGCONT)

    def paused_s(self) -> float:
        """Seconds its commands have been paused, in all, up to now."""
        with _LIVE.lock:
            ongoing = time.monotonic() - self._paused_at if self._paused_at is not None else 0.0
            return self._paused_s + ongoing


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


#: Work a run does in the background, beside its nodes (the step's start
#: measured while the coder works): run directory → how each is stopped.
_BACKGROUND: dict[str, list[Callable[[], None]]] = {}
_BACKGROUND_LOCK = threading.Lock()


def in_background(run_dir: str, stop: Callable[[], None]) -> None:
    """Background work of the run ``run_dir`` started: ``stop`` ends it
    (refuses its new commands, kills its running ones) when the run ends or
    is stopped (:func:`stop_background`)."""
    with _BACKGROUND_LOCK:
        _BACKGROUND.setdefault(run_dir, []).append(stop)


def stop_background(run_dir: str | None = None) -> None:
    """Stop the background work of the run ``run_dir`` (None: of every run
    of this process, as a stop signal does)."""
    with _BACKGROUND_LOCK:
        runs = list(_BACKGROUND) if run_dir is None else [run_dir]
        stops = [stop for run in runs for stop in _BACKGROUND.pop(run, [])]
    for stop in stops:
        stop()


class _Registry:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.groups: dict[str, int | None] = {}
        self.counter: Iterator[int] = itertools.count()


_LIVE = _Registry()


class Subreaper:
    """While any command or node runs, this process is the reaper of its orphaned
    descendants (Linux ``PR_SET_CHILD_SUBREAPER``): a killed grandchild is then
    reaped here instead of lingering as a zombie where PID 1 does not reap
    (containers), and one that left its session is still found
    (:func:`stop_detached`).  Counted, so concurrent users share it; the
    previous setting is restored when the last one ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._previous = 0

    def __enter__(self) -> None:
        with self._lock:
            if self._users == 0 and sys.platform.startswith("linux"):
                self._previous = self._prctl(37)  # PR_GET_CHILD_SUBREAPER
                self._prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
            self._users += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0 and sys.platform.startswith("linux"):
                self._prctl(36, self._previous)

    @staticmethod
    @functools.cache
    def _libc():
        import ctypes

        return ctypes.CDLL(None, use_errno=True)

    def _prctl(self, option: int, value: int | None = None) -> int:
        import ctypes

        if value is not None:
            return self._libc().prctl(option, value, 0, 0, 0)
        current = ctypes.c_int(0)
        self._libc().prctl(option, ctypes.byref(current), 0, 0, 0)
        return current.value


#: The one subreaper setting of this process, shared by every command and node.
SUBREAPER = Subreaper()


#: Held while a command starts and is registered, and while what was left
#: running is swept (:func:`stop_detached`): a command another thread is
#: starting is never taken for one left behind.
SPAWNING = threading.RLock()


def new_token() -> str:
    """A token no other command of any process has: this pid and a serial number."""
    return f"{os.getpid()}-{next(_LIVE.counter)}"


def register(token: str, group: int | None) -> None:
    """A command with ``token`` started; ``group`` is its verified own group,
    if any (also counted in the thread's :class:`Supervision`)."""
    with _LIVE.lock:
        _LIVE.groups[token] = group
        watch = current()
        if watch is not None and group is not None:
            watch.groups.add(group)
        late = watch is not None and watch.stopping and group is not None
        if watch is not None and watch.paused and group is not None:
            _signal_group(group, signal.SIGSTOP)  # started while its supervision is paused
    if late and group is not None:  # started as its supervision was being stopped
        _kill_group(group)


def _kill_group(group: int) -> None:
    _signal_group(group, signal.SIGKILL)


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass


def unregister(token: str) -> None:
    """The command with ``token`` ended."""
    with _LIVE.lock:
        group = _LIVE.groups.pop(token, None)
        watch = current()
        if watch is not None:
            watch.groups.discard(group)


def live_groups() -> set[int]:
    """The process groups of the commands running now."""
    with _LIVE.lock:
        return {group for group in _LIVE.groups.values() if group is not None}


def stop_detached(
    token: str | None = None, since: Mark | None = None, *, owned_too: bool = False
) -> tuple[DetachedProcess, ...]:
    """SIGKILL and reap what a command or a node left running outside the
    command's process group, every descendant of it too; return what was
    stopped.

    The candidates are this process's children that no running command
    owns (not the leader of a live command, not in a live command's group,
    not carrying a live command's token) and that are not in this process's
    own session (stepkit's own helpers, e.g. git, are there; a command and
    all it starts are in sessions of their own).  Of those, ``token`` takes
    the ones that carry it, and with ``since`` (a :func:`mark` taken before
    the command started) also the ones that carry no token and started after
    it.  ``token`` None: with ``since``, every candidate started
    since then (a node's end); without, every candidate (a stop signal).

    ``owned_too``: the last sweep of a stop signal, after every running
    command was killed; what a running command owns is a candidate too.  The
    thread that ran a killed command may not have swept yet (on a loaded
    machine it can be seconds behind) and the process is about to exit
    without it: a command still registered then, and the processes carrying
    its token, would otherwise outlive stepkit.
    """
    with SPAWNING:
        return _stop_detached(token, since, owned_too)


def _stop_detached(
    token: str | None, since: Mark | None, owned_too: bool = False
) -> tuple[DetachedProcess, ...]:
    stopped: dict[int, DetachedProcess] = {}
    for _ in range(_ROUNDS):  # a process may start another while it is being stopped
        found = [
            child
            for child in _orphans(token, owned_too)
            if child in stopped or _belongs(child, token, since)
        ]
        if not found:
            break
        for child in found:
            for victim in [child, *_descendants(child)]:
                stopped.setdefault(victim, DetachedProcess(victim, _command_line(victim)))
                _kill(victim)
        for child in found:
            _reap(child)  # its killed descendants are handed to us: the next round reaps them
    return tuple(stopped.values())


class Mark(NamedTuple):
    """A moment to date processes by: the time (on Linux the time since boot,
    cut to the clock tick as the kernel dates a process's start; elsewhere
    the wall clock, as psutil dates one) and this process's children then,
    which started before it whatever the tick says."""

    time: float
    children: frozenset[int]


def mark() -> Mark:
    """Now, for :func:`stop_detached`'s ``since``."""
    if sys.platform.startswith("linux"):
        tick = os.sysconf("SC_CLK_TCK")
        now = math.floor(time.clock_gettime(time.CLOCK_BOOTTIME) * tick) / tick
    else:
        now = time.time()
    return Mark(now, frozenset(_children()))


def _started_since(pid: int, since: Mark) -> bool:
    if pid in since.children:
        return False
    if sys.platform.startswith("linux"):
        started = _start_since_boot(pid)
        return started is not None and started >= since.time
    import psutil

    try:
        return psutil.Process(pid).create_time() >= since.time
    except psutil.Error:
        return False


def _start_since_boot(pid: int) -> float | None:
    """When the process started, in seconds since boot, as the kernel dates it (None: gone)."""
    fields = _stat(pid)
    return (
        int(fields[19]) / os.sysconf("SC_CLK_TCK") if fields is not None else None
    )  # field 22, starttime


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:  # gone
        return None


def _stat(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (the 3rd on; None: gone or unreadable)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            data = os.read(fd, 4096)  # one read: a stat line is a few hundred bytes
        finally:
            os.close(fd)
        fields = data.rsplit(b")", 1)[1].split(None, 20)  # up to starttime, the 22nd
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 19 else None


def _children() -> list[int]:
    """This process's children: on Linux the processes whose ``/proc`` stat
    names it as their parent; elsewhere psutil's."""
    if sys.platform.startswith("linux"):
        listed = _listed_children()
        if listed is not None:
            return listed
        me = b"%d" % os.getpid()
        return [
            pid for pid in _all_pids() if (fields := _stat(pid)) is not None and fields[1] == me
        ]  # ppid
    import psutil

    try:
        return [child.pid for child in psutil.Process().children()]
    except psutil.Error:
        return []


def _listed_children() -> list[int] | None:
    """This process's children as each of its threads' ``/proc`` ``children``
    file lists them (None: the kernel has no such file).

    Reading a few files per thread instead of the stat of every process
    keeps a command's and a node's end cheap on a machine running hundreds
    of processes (a command's end and a node's end each list them).  An
    adopted orphan is the child of whichever of our threads the kernel gave
    it to, so every thread is read.  The kernel may skip a child while a
    sibling listed just before it exits; each file is read twice and the
    two listings joined, so a miss takes two such exits in a row.
    """
    found: set[int] = set()
    try:
        threads = os.listdir("/proc/self/task")
    except OSError:
        return None
    for thread in threads:
        for _ in range(2):
            try:
                with open(f"/proc/self/task/{thread}/children", "rb") as listing:
                    found.update(int(pid) for pid in listing.read().split())
            except FileNotFoundError:
                if thread == str(os.getpid()):
                    return None  # no children files (CONFIG_PROC_CHILDREN off)
                break  # the thread ended
            except OSError:
                return None
    return list(found)


def _orphans(ending: str | None, owned_too: bool = False) -> list[int]:
    """This process's children, outside its session, that no live command
    owns but the one ending (its token ``ending``); with ``owned_too``, all
    of them."""
    with _LIVE.lock:
        live = {
            tag: group for tag, group in _LIVE.groups.items() if tag != ending and not owned_too
        }
    live_tokens, live_groups = set(live), {group for group in live.values() if group is not None}
    try:
        session = os.getsid(0)
    except OSError:
        return []
    found = []
    for child in _children():
        try:
            if (
                child in live_groups
                or os.getpgid(child) in live_groups
                or os.getsid(child) == session
            ):
                continue
        except OSError:
            continue  # gone already
        if _token_of(child) in live_tokens:
            continue
        found.append(child)
    return found


def stop_helpers() -> None:
    """SIGKILL and reap this process's children in its own session, every
    descendant of theirs too.

    Those are stepkit's own helpers (git, the probes), each waited for where
    it was started, and a stop signal taken while one is waited for kills it
    (``subprocess.run``).  One still running as the command exits is owned
    by nothing and must not go on: left by a signal taken while it was being
    started, after the fork and before ``Popen`` returned (a ``git merge``
    that ends after the run said the step was not merged), or a probe asked
    ahead whose answer the command ended without waiting for."""
    try:
        session = os.getsid(0)
    except OSError:
        return
    for child in _children():
        try:
            if os.getsid(child) != session:
                continue
        except OSError:
            continue  # gone already
        for victim in [child, *_descendants(child)]:
            _kill(victim)
        _reap(child)


def _belongs(child: int, token: str | None, since: Mark | None) -> bool:
    tag = _token_of(child)
    if token is not None and tag == token:
        return True
    if token is not None and tag is not None:
        return False  # another command's, ended before this one
    if since is None:
        return token is None
    return _started_since(child, since)


def _descendants(pid: int) -> list[int]:
    import psutil

    try:
        return [process.pid for process in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


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
            return entry[len(prefix) :].decode("ascii", "replace")
    return None


#: reads of an empty command line, 1 ms apart, before it is taken for gone
_EXEC_READS = 50


def _command_line(pid: int) -> str:
    """The process's command line; ``[comm]`` for one that has none (a zombie).

    A process caught in ``execve`` reads as an empty command line for a few
    microseconds: its new program's arguments are not set up yet, though its
    parent has seen the exec succeed (``subprocess.Popen`` has returned)."""
    for _ in range(_EXEC_READS):
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return "?"
        words = " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
        if words:
            return words
        fields = _stat(pid)
        if fields is None or fields[0] == b"Z":
            break
        time.sleep(0.001)
    try:
        comm = Path(f"/proc/{pid}/comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        comm = ""
    return f"[{comm}]" if comm else "?"


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
