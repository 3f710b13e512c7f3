"""Time limits and stop signals while a node runs.

A node runs in a worker thread (:func:`call_with_timeout`) so the main
thread can enforce its time limit and still take a stop signal: SIGINT
(Ctrl-C), SIGTERM and SIGHUP (what ``timeout``, CI cancellation and ``docker
stop`` send) all raise :class:`StopSignal` in the main thread while
:func:`stop_signals` is in force.  The commands the node runs are then
stopped (:func:`stop_commands`) and the driver saves the run as interrupted
(:class:`RunInterrupted`, exit code 128 + the signal).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stepkit.records import StageContext
    from stepkit.workspace.supervision import DetachedProcess

#: Seconds an interrupted node's commands get to exit after the signal is
#: passed on to them, before SIGKILL (well within the 10 s ``docker stop`` grants).
INTERRUPT_GRACE_S = 3.0
#: Seconds to wait for the node's commands to be reaped once SIGKILLed.
_KILLED_WAIT_S = 1.0
#: The signals that stop a run the way Ctrl-C does.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignal(KeyboardInterrupt):
    """A stop signal arrived; :attr:`signum` says which."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def signal_number(exc: BaseException) -> int:
    """The signal behind an interrupt (a bare KeyboardInterrupt is Ctrl-C)."""
    return getattr(exc, "signum", signal.SIGINT)


def signal_label(signum: int) -> str:
    """``SIGTERM``; the bare number for an unknown signal."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


class RunInterrupted(KeyboardInterrupt):
    """A stop signal during a run: the checkpoint was saved as ``interrupted``."""

    def __init__(self, run_id: str, project_dir: str, signum: int = signal.SIGINT):
        super().__init__(run_id)
        self.run_id = run_id
        self.project_dir = project_dir
        self.signum = signum

    @property
    def resume_command(self) -> str:
        """The command that continues the run."""
        from stepkit.engine.pause import (
            resume_command,
        )  # here: a verify's head start waits on this import

        return resume_command(self.run_id, self.project_dir)

    @property
    def exit_code(self) -> int:
        """128 + the signal, as a shell reports a process it killed."""
        return 128 + self.signum


@contextmanager
def stop_signals() -> Iterator[None]:
    """In the main thread, make SIGINT, SIGTERM and SIGHUP raise
    :class:`StopSignal` there for the duration of the block.

    Untouched, SIGTERM and SIGHUP end the process at once: its commands,
    each in its own session, go on (a coder still editing the tree) and the
    checkpoint stays ``running``.  A signal that is ignored (``nohup``) stays
    ignored; the previous handlers come back after the block.  Elsewhere
    than the main thread this does nothing (signals are only delivered there).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    drop_held_signal()  # one an earlier block held and never raised (it ended in an error)
    previous: dict[signal.Signals, Any] = {}
    for sig in STOP_SIGNALS:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            previous[sig] = signal.signal(sig, _HOLD.handle)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


class _Hold:
    """Stop signals held back while the main thread records something that
    must not be cut in half (:func:`held_signals`)."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending: int | None = None
        #: how many stop signals were raised, and the last one
        self.raised = 0
        self.last: int | None = None

    def handle(self, signum: int, frame: object) -> None:
        if self.depth:
            self.pending = self.pending or signum
            return
        self.raised, self.last = self.raised + 1, signum
        raise StopSignal(signum)


_HOLD = _Hold()  # signal handlers are the process's: so is what they hold


@contextmanager
def held_signals() -> Iterator[None]:
    """Hold stop signals back for the block (the driver's bookkeeping: the
    checkpoint and the state must never be saved half-updated); one that
    arrived meanwhile is raised when the outermost block ends without an
    error.  Only the main thread holds (it alone runs signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _HOLD.depth += 1
    try:
        yield
    finally:
        _HOLD.depth -= 1
    if not _HOLD.depth and _HOLD.pending is not None:
        signum, _HOLD.pending = _HOLD.pending, None
        raise StopSignal(signum)


class _StopRequest:
    """A stop asked for from another thread than the one running the node:
    ``stepkit mcp`` runs a step in a worker thread, where no signal arrives,
    so its main thread asks here and every node waiting wakes."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.waiting: set[threading.Event] = set()
        self.lock = threading.Lock()


_STOP = _StopRequest()


def request_stop(signum: int) -> None:
    """Stop the runs of this process as signal ``signum`` would: each node
    waiting in :func:`call_with_timeout` stops its commands and raises
    :class:`StopSignal` in its own thread, and so does every node after."""
    with _STOP.lock:
        _STOP.signum = signum
        for wake in _STOP.waiting:
            wake.set()


def signals_raised() -> int:
    """How many stop signals the main thread has raised so far (a mark for
    :func:`swallowed_signal`)."""
    return _HOLD.raised


def swallowed_signal(mark: int, exc: BaseException) -> StopSignal | None:
    """The stop signal raised since ``mark`` that ``exc`` stands for: code
    the signal interrupted caught it and raised an error of its own (pydantic
    building a model's schema on its first use wraps whatever interrupts it
    in a ``SchemaError``).  None: none was raised since, or ``exc`` is the
    interrupt itself.  A caller that catches ``Exception`` raises it instead,
    so the run stops as the signal asked, never as a failure of the node."""
    if _HOLD.raised == mark or isinstance(exc, KeyboardInterrupt) or _HOLD.last is None:
        return None
    return StopSignal(_HOLD.last)


def drop_held_signal() -> None:
    """Forget a held signal (the run it would have stopped has been stopped)."""
    _HOLD.pending = None


class NodeTimeout(Exception):
    """The node's call did not return within its time limit."""


def call_with_timeout(
    fn: Callable[[StageContext], Any], ctx: StageContext, timeout: float, nid: str
) -> Any:
    """Call ``fn(ctx)`` in a worker thread and wait at most ``timeout`` seconds.

    A timed-out call cannot be killed: its thread is abandoned (a daemon),
    but its commands are (SIGKILL to their groups; no new one starts), and
    each stops what it detached as it ends.  The wait is in
    the main thread, so a stop signal still interrupts it; the node's
    commands are then stopped (:func:`stop_commands`).  Detached processes a
    command left running are stopped when it ends, and whatever the node
    left running when the node ends (this process is their subreaper
    meanwhile); each is reported as a ``detached_stopped`` event of the node.

    :raises NodeTimeout: the call did not return in time.
    """
    from stepkit.workspace import supervision

    if _STOP.signum is not None:
        raise StopSignal(_STOP.signum)
    if timeout <= 0:
        raise NodeTimeout()
    box: dict[str, Any] = {}

    def report(command: str, stopped: tuple[DetachedProcess, ...]) -> None:
        ctx.emit(
            "detached_stopped",
            command=command,
            processes=[{"pid": p.pid, "command": p.command} for p in stopped],
        )

    watch = supervision.Supervision(
        on_detached=report, env={supervision.RUN_VARIABLE: str(ctx.run_dir)}
    )
    # waited for through an Event, not Thread.join: a join cut short by a signal
    # marks a running thread as stopped (CPython 3.11), and every later join returns at once
    done = threading.Event()
    wake = threading.Event()  # the call returned, or another thread asked to stop (request_stop)

    def work() -> None:
        try:
            with supervision.supervised(watch), supervision.SUBREAPER:
                since = supervision.mark()
                try:
                    box["value"] = fn(ctx)
                finally:
                    # nothing outlives its node: what its commands (or the plugin itself) left running
                    left = supervision.stop_detached(since=since)
                    if left:
                        report(f"node {nid}", left)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc
        finally:
            done.set()
            wake.set()

    try:
        with _STOP.lock:
            _STOP.waiting.add(wake)
        # in the try: on a loaded machine the node's command can start, and the stop
        # signal come, before this thread has come back from starting the node's
        threading.Thread(target=work, name=f"stepkit-{nid}", daemon=True).start()
        finished = _wait(wake, timeout)
        if not done.is_set() and _STOP.signum is not None:
            raise StopSignal(_STOP.signum)
    except KeyboardInterrupt as exc:
        # taken with the lock a command's start and registration hold together: a command
        # being started now is registered first and gets the stop's signal and grace, not
        # the SIGKILL of one started after the stop
        try:
            with supervision.SPAWNING:
                watch.stopping = True
        except KeyboardInterrupt:
            watch.stopping = True  # a second signal: stop without waiting for the start
        stop_commands(done, signal_number(exc))
        raise
    finally:
        with _STOP.lock:
            _STOP.waiting.discard(wake)
    if not finished:
        watch.stop()  # the abandoned call's commands do not outlive its node
        raise NodeTimeout()
    if "error" in box:
        raise box["error"]
    return box["value"]


#: How long the main thread waits on a node at most before it runs Python
#: again: a stop signal the kernel handed to a worker thread is only noted
#: there, and its handler runs in the main thread when that next runs code.
SIGNAL_CHECK_S = 0.5


def _wait(wake: threading.Event, timeout: float | None) -> bool:
    """``wake.wait(timeout)``, woken every :data:`SIGNAL_CHECK_S` so that a
    noted stop signal's handler runs; False when ``timeout`` passed."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = (
            SIGNAL_CHECK_S if deadline is None else min(deadline - time.monotonic(), SIGNAL_CHECK_S)
        )
        if left <= 0:
            return False
        if wake.wait(left):
            return True


def stop_commands(node_done: threading.Event, signum: int = signal.SIGINT) -> None:
    """A stop signal during a node: stop the commands running now.

    Gates, coders and reviewers run their commands in a new session, so the
    terminal's SIGINT never reaches them and, unstopped, they outlive stepkit
    (a coder still editing the tree after "interrupted").  Each command's
    process group gets the signal stepkit got; the node gets
    :data:`INTERRUPT_GRACE_S` to clean up after them (a second signal cuts
    that short; ``node_done`` is set when its call returns); what is left
    gets SIGKILL, and so does whatever a command detached into a session of
    its own.
    """
    from stepkit.workspace import supervision
    from stepkit.workspace.process import signal_group

    supervision.stop_background()  # first: what it measures while stopped is no measure
    groups = supervision.live_groups()
    for group in groups:
        signal_group(group, signum)
    try:
        if groups:
            node_done.wait(INTERRUPT_GRACE_S)
        left = groups & supervision.live_groups()
        for group in left:
            signal_group(group, signal.SIGKILL)
        if left:
            node_done.wait(
                _KILLED_WAIT_S
            )  # the command's own clean-up: reap, stop what it detached
    except KeyboardInterrupt:
        pass  # a second signal: stop waiting
    supervision.stop_detached(owned_too=True)
