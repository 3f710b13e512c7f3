"""Run a shell command the way every stepkit command runs: gates, external
coders and reviewers, and the model's ``run_command`` tool.

The command runs through the shell in its own process group (a new session,
as low in CPU priority as the thread that started it, unless a thread that
waits for that one lends it its own: :func:`lend_priority`);
while a node that runs the coder's code has set a sandbox policy for the
thread, inside that sandbox (:mod:`stepkit.workspace.sandbox`): this is
the one place a confined command starts.
Its stdout and stderr, merged, stream to an optional log file with secrets
masked as they arrive (:class:`stepkit.workspace.redact.Redactor`: a secret or a
PEM block split across reads, or inside a line longer than the line buffer,
is still seen whole); memory stays bounded however large the output,
only its head and a rolling tail are kept.  A wall-clock limit and a
no-output limit end the whole group: SIGTERM, :data:`KILL_GRACE_S` to exit,
then SIGKILL.  When the command ends, whatever it left running in its group
is killed and, with this process as their subreaper, reaped; what it
detached into another session is found by its token and stopped too, and
said in its output (:mod:`stepkit.workspace.supervision`).

A group is only ever signalled when it is verified to be the new group of a
child of this process (:func:`own_group`); otherwise only the process itself
is.  Fake processes (pytest-subprocess) report made-up pids such as 1, and
signalling group 1 kills far more than the command.

One reader thread per output pipe (it masks), one writing the log, a writer
thread for stdin and the wait in the caller's thread (:func:`wait_for_exit`:
on Linux a pidfd that wakes the moment the command exits, else
``proc.wait(timeout)``): that is all a process object needs to offer, so
fake processes run through the same code.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import io
import os
import queue
import select
import signal
import subprocess
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO, cast

from stepkit.workspace import headstart, logcap, sandbox, supervision
from stepkit.workspace.logcap import LogCut
from stepkit.workspace.redact import Redactor
from stepkit.workspace.supervision import DetachedProcess

#: Bytes of the start of the output kept in memory by default.
HEAD_BYTES = 256 * 1024
#: Bytes of the end of the output kept in memory by default.
TAIL_BYTES = 2 * 1024 * 1024
#: Seconds between SIGTERM and SIGKILL when a limit expires.
KILL_GRACE_S = 5.0
#: Seconds to wait for the output to close once the group is dead (a process
#: that left the group with setsid may hold it open forever).
DRAIN_S = 2.0
#: Shell exit codes that mean the command could not be run at all.
NOT_RUNNABLE = {126: "not executable", 127: "command not found"}
#: Why a command was not started while its caller is being stopped.
STOPPING = "stepkit is stopping the run; no new command starts"

_READ_CHUNK = 1024 * 1024
#: The output pipe's capacity asked for (Linux's unprivileged maximum by
#: default): a fast writer fills it while a chunk is masked, and each read
#: then takes up to a megabyte, not the default pipe's 64 KiB.
_PIPE_BYTES = 1024 * 1024
#: Blocks the log writer may hold before the capture waits for it (a block is
#: at most about one read: a few megabytes at most).
_WRITES_QUEUED = 4
#: Bytes of log between two hints to the kernel that it may write back the
#: newest of them and drop the older from its cache (see :class:`_LogWriter`).
_DROP_WINDOW = 8 * 1024 * 1024
#: Seconds a hint may take (about 1 ms here) before the writer stops giving
#: them: starting the write-back waits for a disk slower than the output.
_HINT_STALL_S = 0.05
#: Seconds the kernel makes an unprivileged process wait between two
#: changes of an autogroup's niceness (``HZ / 10``, see :func:`_carry_niceness`).
_AUTOGROUP_WINDOW_S = 0.1
_DETACHED_NOTE = "\n[stepkit: stopped reading: a detached process kept the output open]\n"


@dataclass(frozen=True)
class ProcessResult:
    """How one command ran.

    :ivar exit_code: the exit status (negative: killed by that signal; None:
        never started).
    :ivar expired: the limit that ended it (``timed out after N s``,
        ``timed out: no output for N s``), or None.
    :ivar start_error: why it could not be started (the spawn failed), or None.
    :ivar output: stdout+stderr with secrets masked; for a large output its
        head and tail joined by a ``[... N bytes omitted ...]`` line.
    :ivar lines: lines of output (a last line without newline counts).
    :ivar size: bytes of output, all of it (after masking, but for what a
        capped log cut: that is never masked).
    :ivar log: the log file with the masked output (for a capped log: its
        head, the lines naming a failure and its tail), or None.
    :ivar detached: processes it left running outside its process group,
        which were stopped when it ended (each also a line of the output).
    """

    command: str
    exit_code: int | None
    expired: str | None
    start_error: str | None
    output: str
    lines: int
    size: int
    duration_s: float
    log: str | None
    detached: tuple[DetachedProcess, ...] = ()

    def crash(self, who: str = "the command") -> str | None:
        """One line saying why the run did not end on its own terms (a limit
        expired, it could not start, a signal killed it), or None."""
        if self.expired:
            return f"{who} {self.expired}; its process group was killed"
        if self.start_error:
            return f"{who} could not start: {self.start_error}"
        if self.exit_code in NOT_RUNNABLE:
            return f"{who} could not start: {NOT_RUNNABLE[self.exit_code]} (exit {self.exit_code}): {self.command}"
        sig = signal_of(self.exit_code)
        if sig is not None:
            return f"{who} was killed by signal {signal_name(sig)}"
        return None


def run(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin_text: str | None = None,
    timeout: float | None = None,
    no_output_timeout: float | None = None,
    log_path: Path | None = None,
    on_text: Callable[[str], None] | None = None,
    head_bytes: int = HEAD_BYTES,
    tail_bytes: int = TAIL_BYTES,
    log_limit: int | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> ProcessResult:
    """Run ``command`` through the shell in ``cwd``, in its own process group.

    :param env: its environment (default: this process's).
    :param stdin_text: written to its stdin (default: stdin is /dev/null).
    :param timeout: wall-clock limit in seconds (None: none).
    :param no_output_timeout: limit in seconds without any output (None: none).
    :param log_path: where the whole masked output is written (truncated
        first; None: no log).
    :param on_text: called, in a reader thread, with each masked block of
        whole lines as it arrives, including what is not kept in memory.
    :param head_bytes: bytes of the start of the output kept for ``output``.
    :param tail_bytes: bytes of the end of the output kept for ``output``.
    :param log_limit: about the most bytes the log keeps (None: all of the
        output): its first half, then the lines naming a failure and the
        end of the output (:mod:`stepkit.workspace.logcap`); what is cut
        is never masked.  Not with ``on_text``, which sees everything.
    :param meanwhile: called once the command has started (not when it could
        not start): work of the caller's that waits for the start, so as to
        take nothing from the way there.
    """
    start = time.monotonic()
    exit_code = expired = start_error = None
    detached: tuple[DetachedProcess, ...] = ()
    watch = supervision.current()
    token = supervision.new_token()
    with open(log_path, "wb") if log_path is not None else contextlib.nullcontext() as log:
        capture = _Capture(
            log, head_bytes, tail_bytes, on_text, log_limit if on_text is None else None
        )
        with supervision.SUBREAPER:
            try:
                if watch is not None and watch.stopping:
                    raise _Refused
                since = supervision.mark()
                argv, run_env = _confined(
                    command,
                    cwd,
                    {
                        **(os.environ if env is None else env),
                        **(watch.env if watch else {}),
                        supervision.TOKEN_VARIABLE: token,
                    },
                )
                # exactly this, started early by the head start: adopted, supervised from its start
                early = headstart.take("gate", argv, cwd, run_env, stdin_text)
                # started and registered as one step: another thread's sweep for
                # processes left behind (a node's end) never sees it in between
                with supervision.SPAWNING:
                    if early is not None:
                        proc, group, token = early.proc, early.group, early.token
                        since, start = early.since, early.started
                    else:
                        proc = subprocess.Popen(
                            argv,
                            shell=isinstance(argv, str),
                            cwd=cwd,
                            env=run_env,
                            stdin=subprocess.DEVNULL if stdin_text is None else subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT,
                            start_new_session=True,
                        )
                        group = own_group(getattr(proc, "pid", 0) or 0)
                    supervision.register(token, group)
                lowered = _carry_niceness(group) if group is not None else None
                if meanwhile is not None:
                    meanwhile()
            except (OSError, _Refused) as exc:
                start_error = STOPPING if isinstance(exc, _Refused) else _spawn_error(exc)
                capture.feed(f"could not start the command: {start_error}\n".encode())
                capture.close()
            else:
                try:
                    expired, detached = _supervise(
                        proc,
                        capture,
                        stdin_text,
                        timeout,
                        no_output_timeout,
                        token,
                        since if group is not None or early is not None else None,
                        early,
                        start if early is not None else None,
                    )
                finally:
                    supervision.unregister(token)
                    if lowered is not None:
                        lowered()
                exit_code = proc.returncode
    if detached and watch is not None and watch.on_detached is not None:
        watch.on_detached(command, detached)
    return ProcessResult(
        command=command,
        exit_code=exit_code,
        expired=expired,
        start_error=start_error,
        output=capture.text(),
        lines=capture.lines,
        size=capture.size,
        duration_s=round(time.monotonic() - start, 3),
        log=str(log_path) if log_path is not None else None,
        detached=detached,
    )


def _confined(
    command: str, cwd: Path, env: dict[str, str]
) -> tuple[str | list[str], dict[str, str]]:
    """The command as it starts: in the sandbox of the thread's policy, if
    one is set (:mod:`stepkit.workspace.sandbox`), else through the shell."""
    policy = sandbox.current()
    if policy is None:
        return command, env
    return policy.wrap(command, Path(cwd), env)


def _carry_niceness(leader: int) -> Callable[[], None] | None:
    """Give the session ``leader`` leads the niceness of this thread, when it
    is below the default priority (the start's measure, a ``nice``d stepkit),
    unless a waiter lent the thread a higher priority (:func:`lend_priority`).
    Returns what to call once the command has ended (None: not lowered).

    Where the kernel groups processes by session (autogroups: Linux's
    default on most distributions), it first shares the CPU between the
    groups, each at its own niceness, and a new session's group starts at
    nice 0: the nice value the command inherits would then rank it only
    against its own children, and it would take as much CPU as the gates.
    Its children started before this are in the same group, so they are
    lowered with it."""
    if os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) <= 0:
        return None  # nothing a waiter lends ranks it higher
    lowered = _lowered(threading.current_thread())
    with lowered.lock:
        niceness = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        if lowered.lent is not None:
            niceness = min(niceness, lowered.lent)
        if niceness <= 0:
            return None
        _set_autogroup_niceness(leader, niceness)
        lowered.sessions[leader] = niceness
    return lambda: lowered.forget(leader)


def lend_priority(thread: threading.Thread) -> None:
    """Priority inheritance: the calling thread is about to wait for work of
    ``thread``, which may run below its priority (the start's measure, at
    the lowest).  The sessions of ``thread``'s commands that run now, and of
    those it starts from now on, get the caller's niceness where that ranks
    them higher: what the caller waits for no longer starves behind the
    load it was meant to leave the CPU to.  (A process's own nice value
    cannot be brought back down without privilege: where the kernel has no
    session autogroups, the commands keep theirs.)"""
    niceness = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    lowered = _lowered(thread)
    with lowered.lock:  # a command ``thread`` is lowering meanwhile is lowered first
        if lowered.lent is None or niceness < lowered.lent:
            lowered.lent = niceness
        for leader, was in sorted(lowered.sessions.items()):
            if was > niceness:
                _set_autogroup_niceness(leader, niceness)
                lowered.sessions[leader] = niceness


class _Lowered:
    """A thread's running commands whose sessions were set below the
    default priority (leader → niceness), and the niceness a waiter lent
    the thread (None: none)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sessions: dict[int, int] = {}
        self.lent: int | None = None

    def forget(self, leader: int) -> None:
        """``leader``'s command ended: its session is no longer the thread's."""
        with self.lock:
            self.sessions.pop(leader, None)


# by the thread object, not its id: a later thread may reuse the id, never the object
_LOWERED: weakref.WeakKeyDictionary[threading.Thread, _Lowered] = weakref.WeakKeyDictionary()
_LOWERED_LOCK = threading.Lock()


def _lowered(thread: threading.Thread) -> _Lowered:
    with _LOWERED_LOCK:
        return _LOWERED.setdefault(thread, _Lowered())


def _set_autogroup_niceness(leader: int, niceness: int) -> None:
    """Set the niceness of the autogroup of the session ``leader`` leads.  A
    kernel without autogroups has nothing to set; one that refuses (no
    permission, the command gone) leaves the session as it is.  An
    unprivileged process may set a group's niceness once in
    :data:`_AUTOGROUP_WINDOW_S` system-wide: a busy window is waited out."""
    for _ in range(3):
        try:
            fd = os.open(f"/proc/{leader}/autogroup", os.O_WRONLY)
            try:
                os.write(fd, str(niceness).encode())
            finally:
                os.close(fd)
        except BlockingIOError:
            time.sleep(_AUTOGROUP_WINDOW_S)
            continue
        except OSError:
            pass
        return


def signal_of(exit_code: int | None) -> int | None:
    """The signal that ended the process: a negative status, or the shell's
    128+N for a child it did not exec; None for a normal exit."""
    if exit_code is None:
        return None
    if exit_code < 0:
        return -exit_code
    if 128 < exit_code < 128 + signal.NSIG:
        return exit_code - 128
    return None


def signal_name(sig: int) -> str:
    """``SIGKILL (9)``; the bare number for an unknown signal."""
    try:
        return f"{signal.Signals(sig).name} ({sig})"
    except ValueError:
        return str(sig)


def own_group(pid: int) -> int | None:
    """``pid`` when it leads its own process group and is a child of this
    process (a command started with ``start_new_session``); else None: that
    group is not ours to signal."""
    if pid <= 1:
        return None
    try:
        if os.getpgid(pid) != pid or pid == os.getpgrp():
            return None
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and int(stat.read_text().rsplit(")", 1)[1].split()[1]) != os.getpid():
            return None
    except (OSError, ValueError, IndexError):
        return None
    return pid


def signal_group(group: int, sig: int) -> None:
    """Send ``sig`` to process group ``group`` (one that is gone already is fine)."""
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass


# -- supervising a running command ---------------------------------------------


class _Refused(Exception):
    """The caller is being stopped (its :class:`~stepkit.workspace.supervision.Supervision`
    says so): no new command starts."""


def _supervise(
    proc: subprocess.Popen[bytes],
    capture: _Capture,
    stdin_text: str | None,
    timeout: float | None,
    no_output_timeout: float | None,
    token: str,
    since: supervision.Mark | None,
    early: headstart.Launched | None = None,
    start: float | None = None,
) -> tuple[str | None, tuple[DetachedProcess, ...]]:
    """Feed stdin, copy the output to ``capture`` and wait for the command,
    enforcing the limits; kill and reap what it leaves behind, detached
    processes too (``since``: a mark taken just before it started, see
    :func:`~stepkit.workspace.supervision.stop_detached`; None for a process
    that is not verifiably ours; ``early``: the head start's process, its
    output read so far and its group, adopted; ``start``: when it started).
    Returns the limit that expired, if any, and the detached processes stopped."""
    reader: _Reader | headstart.Feed
    if early is not None and early.reader is not None:
        group, reader = early.group, early.reader
        reader.attach(capture)
    else:
        group = own_group(getattr(proc, "pid", 0) or 0)
        # stdout=PIPE: Popen's stdout is a buffered reader, which its type does not say
        reader = _Reader(cast(io.BufferedReader, proc.stdout), capture)
        reader.start()
    if stdin_text is not None:
        threading.Thread(target=_write_stdin, args=(proc.stdin, stdin_text), daemon=True).start()
    expired = None
    detached: tuple[DetachedProcess, ...] = ()
    try:
        expired = _wait(proc, reader, timeout, no_output_timeout, start)
        if expired is not None:
            _terminate(proc, group)
    finally:
        # Whatever the command left running would hold the output open forever.
        # The leader may be reaped already: while any member of its group
        # lives, the group id cannot be handed to a new process.
        _signal(proc, group, signal.SIGKILL)
        proc.wait()
        if group is not None:
            _reap_group(group)
        detached = supervision.stop_detached(token, since)  # now orphans: our children
        reader.join(DRAIN_S)
        notes = "".join(f"{process.note()}\n" for process in detached)
        capture.close(
            (f"\n{notes}" if notes else "") + (_DETACHED_NOTE if reader.is_alive() else "")
        )
    if reader.error is not None:
        raise reader.error  # e.g. the log's disk is full: the caller's failure, as if it had read itself
    return expired, detached


def _wait(
    proc: subprocess.Popen,
    reader: _Reader | headstart.Feed,
    timeout: float | None,
    no_output_timeout: float | None,
    start: float | None = None,
) -> str | None:
    """Wait for the command to exit, waking at the nearest deadline (the
    wall-clock one counted from ``start``, default now); the limit that
    expired first, or None when it exited in time.  The time its
    supervision held it paused (:meth:`~stepkit.workspace.supervision.Supervision.pause`)
    moves both deadlines on: a stopped command neither runs nor prints."""
    start = time.monotonic() if start is None else start
    watch = supervision.current()
    paused_before = watch.paused_s() if watch is not None else 0.0
    while True:
        paused = watch.paused_s() - paused_before if watch is not None else 0.0
        limits = []
        if timeout:
            limits.append((start + timeout + paused, f"timed out after {timeout:g} s"))
        if no_output_timeout:
            limits.append(
                (
                    reader.last_output + no_output_timeout + paused,
                    f"timed out: no output for {no_output_timeout:g} s",
                )
            )
        if not limits:
            proc.wait()
            return None
        deadline, reason = min(limits)
        left = deadline - time.monotonic()
        if left <= 0:
            return reason
        if wait_for_exit(proc, left):
            return None
        # a deadline passed, or output moved the no-output one


def wait_for_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``proc`` to exit; True when it did
    (it is reaped then).  A real child on Linux is waited on through a pidfd,
    which wakes the moment the process exits; elsewhere (no ``pidfd_open``,
    a fake process object) ``proc.wait(timeout)``, which polls in steps of up
    to 50 ms."""
    pidfd = _pidfd(proc)
    if pidfd is None:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        if not poller.poll(max(0, round(timeout * 1000))):
            return False
    finally:
        os.close(pidfd)
    proc.wait()  # exited: the pidfd is readable once it is a zombie, so this does not block
    return True


def _pidfd(proc: subprocess.Popen) -> int | None:
    """A pidfd for a real child that has not been reaped, else None."""
    if (
        not hasattr(os, "pidfd_open")
        or type(proc) is not subprocess.Popen
        or proc.returncode is not None
    ):
        return None
    try:
        return os.pidfd_open(proc.pid)
    except OSError:  # an old kernel, or the process is gone already
        return None


def _terminate(proc: subprocess.Popen, group: int | None) -> None:
    """SIGTERM, then up to :data:`KILL_GRACE_S` for the command to exit (the
    caller sends the SIGKILL)."""
    _signal(proc, group, signal.SIGTERM)
    wait_for_exit(proc, KILL_GRACE_S)


def _signal(proc: subprocess.Popen, group: int | None, sig: int) -> None:
    """Signal the verified group; without one, only the process, if it runs."""
    if group is not None:
        signal_group(group, sig)
    elif proc.poll() is None:
        proc.send_signal(sig)


def _reap_group(group: int) -> None:
    """Reap the group's processes that were handed to us as their subreaper."""
    while True:
        try:
            os.waitpid(-group, 0)
        except ChildProcessError:
            return


def _write_stdin(stream: IO[bytes], text: str) -> None:
    try:
        with stream:
            stream.write(text.encode("utf-8"))
    except (OSError, ValueError):
        pass  # a command that does not read its stdin is fine


def _spawn_error(exc: OSError) -> str:
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or exc}{where} ({type(exc).__name__})"


class _Reader(threading.Thread):
    """Copies one output pipe into the capture until it closes, noting when
    output last arrived (the no-output limit) and what went wrong, if
    anything (for the caller to raise)."""

    def __init__(self, stream: io.BufferedReader, capture: _Capture):
        super().__init__(name="stepkit-output", daemon=True)
        self._stream = stream
        self._capture = capture
        self.last_output = time.monotonic()
        self.error: Exception | None = None

    def run(self) -> None:
        _widen(self._stream)
        try:
            with self._stream:
                while chunk := self._stream.read1(_READ_CHUNK):
                    self.last_output = time.monotonic()
                    self._capture.feed(chunk)
        except Exception as exc:  # noqa: BLE001 - re-raised in the caller's thread
            self.error = exc


def _widen(stream: IO[bytes]) -> None:
    """Ask for a pipe of :data:`_PIPE_BYTES` (Linux; anything else keeps its own)."""
    try:
        fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a pipe, not Linux, above this system's limit, or a fake process's stream


class _LogWriter(threading.Thread):
    """Writes the kept blocks to the log, in order, and counts their lines, in
    a thread of its own: the write (the kernel's copy into the page cache,
    which for a fresh file costs about what masking does) and the count then
    overlap the masking of the next chunk.  A write that fails is raised by
    the next :meth:`put` or by :meth:`close`.

    A log is written once and never read back whole, so what is written
    lingers in the page cache only for a few :data:`_DROP_WINDOW` (as ``dd
    oflag=nocache`` does): a 500 MB log would otherwise push 500 MB of what
    the machine caches out of memory, and take that much fresh memory, each
    page of which costs a fault on a VM whose free memory goes back to its
    host (a copy at 3 ms per MB, not 0.2).  The hints change what is cached,
    never what is written; on a disk too slow to take the log as fast as it
    comes they stop, and the kernel caches it as it would have."""

    def __init__(self, log: BinaryIO):
        super().__init__(name="stepkit-log", daemon=True)
        self._log = log
        self._blocks: queue.Queue[tuple[bytes, bool] | None] = queue.Queue(_WRITES_QUEUED)
        self.newlines = 0
        self.error: Exception | None = None
        self._fd = _cache_hint_fd(log)
        self._written = self._dropped = 0

    def put(self, block: bytes, counted: bool = True) -> None:
        """Write ``block`` after those before it (``counted``: count its lines)."""
        if self.error is not None:
            raise self.error
        self._blocks.put((block, counted))

    def close(self) -> None:
        """Wait until every block is written."""
        self._blocks.put(None)
        self.join()
        if self.error is not None:
            raise self.error

    def run(self) -> None:
        while (item := self._blocks.get()) is not None:
            block, counted = item
            if counted:
                self.newlines += block.count(b"\n")
            if self.error is None:
                try:
                    self._log.write(block)
                except Exception as exc:  # noqa: BLE001 - raised in the capture's thread
                    self.error = exc
                    continue
                self._written += len(block)
                if self._fd is not None and self._written - self._dropped >= 3 * _DROP_WINDOW:
                    self._drop_behind(self._fd)

    def _drop_behind(self, fd: int) -> None:
        """Start the write-back of the newest window; drop the windows before
        the one before it from the cache (written back by now; a page that is
        not yet stays, as it would have)."""
        newest, behind = self._written - _DROP_WINDOW, self._written - 2 * _DROP_WINDOW
        start = time.monotonic()
        try:
            os.posix_fadvise(fd, newest, _DROP_WINDOW, os.POSIX_FADV_DONTNEED)
            os.posix_fadvise(fd, self._dropped, behind - self._dropped, os.POSIX_FADV_DONTNEED)
        except OSError:
            self._fd = None  # not a file the hint applies to: leave its cache be
        if time.monotonic() - start > _HINT_STALL_S:
            self._fd = None
        self._dropped = behind


def _cache_hint_fd(log: BinaryIO) -> int | None:
    """The log's file descriptor, where the system takes hints about its cache."""
    if not hasattr(os, "posix_fadvise"):
        return None
    try:
        return log.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return None  # an in-memory log


class _Capture:
    """Masks the output as it arrives, streams it to the log and keeps only
    its head and a rolling tail in memory.  Fed by the reader thread; once
    closed it takes nothing more."""

    def __init__(
        self,
        log: BinaryIO | None,
        head_bytes: int,
        tail_bytes: int,
        on_text: Callable[[str], None] | None,
        log_limit: int | None = None,
    ):
        self._log = log
        self._log_limit = log_limit if log is not None else None
        self._cut: LogCut | None = None
        self._fed = 0  # raw bytes fed while no log cap cuts (the head)
        self._head_bytes = head_bytes
        self._tail_bytes = tail_bytes
        self._on_text = on_text
        self._lock = threading.Lock()
        self._closed = False
        # bytes that are not UTF-8 survive as surrogates and are written back as they came
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._redactor = Redactor()
        self._writer: _LogWriter | None = None
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.size = 0
        self._newlines = 0
        self._last_byte = b""

    def feed(self, data: bytes) -> None:
        """Take a chunk; what the redactor has masked for good is kept (whole
        lines; a partial last line waits for the next chunk, so a secret split
        across chunks is still seen whole)."""
        with self._lock:
            if self._closed:
                return
            if self._cut is not None:
                self._cut.feed(data)
                return
            rest = b""
            if self._log_limit is not None:
                # the head: the first half of the cap, however the reads cut it
                room = self._log_limit // 2 - self._fed
                data, rest = data[:room], data[room:]
                self._fed += len(data)
            # most output is ASCII and holds no secret: its whole lines go to the
            # log as they came, checked by one RE2 pass, never decoded or split
            plain = (
                None
                if self._on_text is not None or self._decoder.getstate()[0]
                else self._redactor.feed_ascii(data)
            )
            if plain is not None:
                self._keep_bytes(plain)
            else:
                self._keep(self._redactor.feed(self._decoder.decode(data)))
            if rest:
                assert self._log_limit is not None
                self._start_cut(self._log_limit).feed(rest)

    def close(self, note: str = "") -> None:
        """Keep a final line that had no newline, then ``note``; take no more."""
        with self._lock:
            if not self._closed:
                try:
                    if self._cut is not None:
                        tail = self._cut.close()
                        self.size += self._cut.bytes
                        self._last_byte = self._cut.last_byte
                        self._keep_bytes(tail)
                    else:
                        self._keep(self._redactor.feed(self._decoder.decode(b"", final=True)))
                        self._keep(self._redactor.close())
                    self._keep(note)
                finally:
                    if self._writer is not None:
                        self._writer.close()  # also when a write failed: its thread ends
            self._closed = True
            if self._log is not None:
                self._log.flush()

    @property
    def lines(self) -> int:
        """Lines of output so far (a last line without newline counts)."""
        newlines = self._newlines + (self._writer.newlines if self._writer is not None else 0)
        newlines += self._cut.lines if self._cut is not None else 0
        return newlines + (1 if self._last_byte not in (b"", b"\n") else 0)

    def _keep(self, masked: str) -> None:
        if not masked:
            return
        if self._on_text is not None:
            self._on_text(masked)
        self._keep_bytes(masked.encode("utf-8", "surrogateescape"))

    def _start_cut(self, cap: int) -> LogCut:
        """Stop masking: from here the output goes to a :class:`LogCut`, with
        what was fed but not yet masked; the kept tail starts afresh."""
        pending = self._redactor.take_pending().encode("utf-8", "surrogateescape")
        pending += self._decoder.getstate()[0]
        self._decoder.reset()
        self._write(b"\n" if self._last_byte not in (b"", b"\n") else b"", False)
        self._write(logcap.opening(cap), False)
        self._tail.clear()
        self._tail_size = 0
        self._cut = LogCut(cap, self.size, self._write, pending)
        return self._cut

    def _write(self, block: bytes, counted: bool = True) -> None:
        """Hand ``block`` to the log's writer (``counted``: output, whose lines count)."""
        if not block:
            return
        if self._writer is None:
            assert self._log is not None
            self._writer = _LogWriter(self._log)
            self._writer.start()
        self._writer.put(block, counted)

    def _keep_bytes(self, block: bytes) -> None:
        if not block:
            return
        if self._log is not None:
            self._write(block)
        else:
            self._newlines += block.count(b"\n")
        self.size += len(block)
        self._last_byte = block[-1:]
        room = self._head_bytes - len(self._head)
        if room > 0:
            self._head += block[:room]
            block = block[room:]
        if block:
            self._tail.append(block)
            self._tail_size += len(block)
            while self._tail and self._tail_size - len(self._tail[0]) >= self._tail_bytes:
                self._tail_size -= len(self._tail.popleft())

    def text(self) -> str:
        """The whole output, or for a large one its head and tail joined by a
        ``[... N bytes omitted ...]`` line (both cut at line boundaries)."""
        # a byte that is not UTF-8 (a file name's) stays a surrogate, as in feed()
        head, tail = bytes(self._head), b"".join(self._tail)[-self._tail_bytes :]
        if len(head) + len(tail) >= self.size:
            return (head + tail).decode("utf-8", "surrogateescape")
        head = head[: head.rfind(b"\n") + 1] or head
        tail = tail[tail.find(b"\n") + 1 :] or tail
        omitted = self.size - len(head) - len(tail)
        return (
            head.decode("utf-8", "surrogateescape")
            + f"[... {omitted} bytes omitted ...]\n"
            + tail.decode("utf-8", "surrogateescape")
        )
