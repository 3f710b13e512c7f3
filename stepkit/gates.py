"""The gate runner: run a verification command and record the evidence.

Each gate runs with the shell in the project directory, in its own process
group, under a wall-clock limit and a no-output limit.  On expiry the whole
group gets SIGTERM, then SIGKILL.  Output (stdout and stderr merged) streams
to ``<log_dir>/<gate>-<n>.log`` with secrets masked; memory stays bounded —
only the first :data:`HEAD_BYTES` and the last :data:`TAIL_BYTES` are kept
for the condensed evidence, however large the output.  When the command
ends, whatever it left running in its group is killed and reaped, so a gate
never leaves orphans or zombies behind.

Status is decided here from the exit code, never by a model: ``pass`` (0),
``fail`` (any other code, or killed by a signal), ``timeout`` (a limit
expired), ``error`` (exit 126/127 or the command could not be started: the
tool is missing or not executable — an environment fault, not the code's),
``not_run`` (no command: NOT evidence of a pass).
"""

from __future__ import annotations

import functools
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from stepkit.config import Config, Timeouts
from stepkit.detect import resolve_command
from stepkit.evidence import condense, summary_of
from stepkit.redact import redact
from stepkit.results import GATE_ORDER, GateResult

#: Bytes of the start of the output kept in memory for the evidence.
HEAD_BYTES = 256 * 1024
#: Bytes of the end of the output kept in memory for the evidence.
TAIL_BYTES = 2 * 1024 * 1024
#: Seconds between SIGTERM and SIGKILL when a limit expires.
KILL_GRACE_S = 5.0
#: Seconds to wait for the pipe to close once the group has been killed (a
#: process that left the group with setsid may hold it open forever).
DRAIN_S = 2.0
_READ_CHUNK = 256 * 1024
#: A line longer than this is written out without waiting for its newline.
_MAX_PENDING = 1024 * 1024
_NOT_FOUND_CODES = {126: "not executable", 127: "command not found"}


def resolve_commands(pm, project_dir: Path, config: Config) -> dict[str, tuple[str | None, str | None]]:
    """Each gate's ``(command, plugin)``, resolved through the project hooks
    without running anything (command None: the gate has no command)."""
    return {gate: resolve_command(pm, gate, Path(project_dir), config) for gate in GATE_ORDER}


def run_gates(
    pm,
    project_dir: Path,
    config: Config,
    log_dir: Path,
    gates: Iterable[str] = GATE_ORDER,
    on_gate: Callable[[GateResult], None] | None = None,
    timeouts: Timeouts | Mapping[str, float] | None = None,
    on_start: Callable[[str, str | None], None] | None = None,
) -> list[GateResult]:
    """Run the requested gates in protocol order (format first, so the other
    gates' evidence describes the formatted bytes).

    :param gates: the gates to run (any order; unknown names raise ValueError).
    :param on_gate: called with each result as soon as its gate finished.
    :param timeouts: limits in seconds by gate name and ``no_output``;
        default ``config.timeouts``.
    :param on_start: called with ``(gate, command)`` before each gate runs.
    :return: one :class:`GateResult` per gate, in run order.
    """
    wanted = set(gates)
    unknown = wanted - set(GATE_ORDER)
    if unknown:
        raise ValueError(f"unknown gate(s): {', '.join(sorted(unknown))}")
    limits = timeouts if timeouts is not None else config.timeouts
    results = []
    for gate in (g for g in GATE_ORDER if g in wanted):
        command, plugin = resolve_command(pm, gate, Path(project_dir), config)
        if on_start is not None:
            on_start(gate, command)
        result = run_gate(
            gate, command, plugin, project_dir, log_dir,
            timeout=_limit(limits, gate), no_output_timeout=_limit(limits, "no_output"), pm=pm,
        )
        results.append(result)
        if on_gate is not None:
            on_gate(result)
    return results


def run_gate(
    name: str,
    command: str | None,
    plugin: str | None,
    project_dir: Path,
    log_dir: Path,
    timeout: float | None,
    no_output_timeout: float | None,
    pm,
    env: Mapping[str, str] | None = None,
) -> GateResult:
    """Run one gate's command and record it.

    :param name: the gate (``format``, ``lint``, ``build``, ``tests``).
    :param command: the shell command; None records the gate as ``not_run``.
    :param plugin: the plugin that chose the command (recorded).
    :param project_dir: where the command runs.
    :param log_dir: where ``<name>-<n>.log`` is written (created if missing).
    :param timeout: wall-clock limit in seconds (None: no limit).
    :param no_output_timeout: limit in seconds without any output (None: no limit).
    :param pm: the plugin manager whose parsers condense the output.
    :param env: the command's environment (default: this process's).
    """
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    if command is None:
        return _not_run(name, plugin, started_at)
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path, log_file = _new_log(log_dir, name)
    start = time.monotonic()
    spawn_error = None
    with log_file:
        capture = _Capture(log_file)
        try:
            returncode, expired = _execute(command, Path(project_dir), env, timeout, no_output_timeout, capture)
        except OSError as exc:
            returncode, expired = None, None
            spawn_error = f"could not start the command: {exc.strerror or exc} ({type(exc).__name__})"
            capture.feed(f"{spawn_error}\n".encode())
        capture.close()
    duration = round(time.monotonic() - start, 3)

    status, note, exit_code, headline = _classify(returncode, expired, spawn_error)
    output = capture.text()
    evidence = condense(
        pm, name, command, output, exit_code, log_path, total_lines=capture.lines, note=note,
    )
    summary = summary_of(evidence, output) or (f"no output (exit code {exit_code})" if exit_code is not None else "")
    if headline:
        alone = status == "timeout" or spawn_error is not None or not summary
        summary = headline if alone else f"{headline}: {summary}"
    return GateResult(
        name=name, status=status, command=command, plugin=plugin, exit_code=exit_code,
        duration_s=duration, log=str(log_path), summary=summary, evidence=evidence,
        started_at=started_at,
    )


def not_run_text(name: str, plugin: str | None = None) -> str:
    """The evidence of a gate that has no command: plainly not a pass."""
    text = (
        f"GATE NOT RUN: no {name} command was found for this project. "
        f"This is NOT evidence that {name} passed."
    )
    if plugin:
        text += f"\n(plugin {plugin!r} answered that this project has no {name} command.)"
    return text


def _not_run(name: str, plugin: str | None, started_at: str) -> GateResult:
    return GateResult(
        name=name, status="not_run", command=None, plugin=plugin, exit_code=None,
        summary=f"not run: no {name} command", evidence=not_run_text(name, plugin),
        started_at=started_at,
    )


def _classify(
    returncode: int | None, expired: str | None, spawn_error: str | None
) -> tuple[str, str | None, int | None, str | None]:
    """(status, note for the evidence, recorded exit code, summary headline)."""
    fault = " — an environment fault, not a failure of the code"
    if spawn_error is not None:
        return "error", f"error: {spawn_error}{fault}", None, spawn_error
    if expired is not None:
        return "timeout", f"{expired}; its process group was killed", None, expired
    assert returncode is not None
    if returncode in _NOT_FOUND_CODES:
        why = f"tool missing or not executable (exit {returncode}: {_NOT_FOUND_CODES[returncode]})"
        return "error", f"error: {why}{fault}", returncode, why
    if returncode < 0:
        killed = f"killed by signal {_signal_name(-returncode)}"
        return "fail", killed, returncode, killed
    return ("pass" if returncode == 0 else "fail"), None, returncode, None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _limit(limits: Any, name: str) -> float | None:
    value = limits.get(name) if isinstance(limits, Mapping) else getattr(limits, name, None)
    return float(value) if value else None


def _new_log(log_dir: Path, name: str) -> tuple[Path, BinaryIO]:
    """Open ``<name>-<n>.log`` with the first free n (exclusive create, so two
    runners never share a file)."""
    n = 1
    while True:
        path = log_dir / f"{name}-{n}.log"
        try:
            return path, path.open("xb")
        except FileExistsError:
            n += 1


# -- running -------------------------------------------------------------------


def _execute(
    command: str,
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout: float | None,
    no_output_timeout: float | None,
    capture: _Capture,
) -> tuple[int, str | None]:
    """Run ``command`` to the end; (exit code, expiry reason or None)."""
    with _SUBREAPER:
        proc = subprocess.Popen(
            command, shell=True, cwd=cwd, env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            expired = _pump(proc, timeout, no_output_timeout, capture)
        finally:
            # Whatever the command left in its group dies with it; the leader is
            # not reaped yet, so the group id cannot have been reused.
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
            _reap_group(proc.pid)
            proc.stdout.close()
    return proc.returncode, expired


def _pump(proc: subprocess.Popen, timeout: float | None, no_output_timeout: float | None, capture: _Capture) -> str | None:
    """Copy the output to ``capture`` until the process has exited and the pipe
    is closed, enforcing the limits.  Returns the expiry reason, if any."""
    fd = proc.stdout.fileno()
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ, "output")
    exit_fd = _pidfd(proc.pid)
    if exit_fd is not None:
        selector.register(exit_fd, selectors.EVENT_READ, "exit")
    start = last_output = time.monotonic()
    exited = eof = False
    expired: str | None = None
    term_at = kill_at = None
    try:
        while not (exited and eof):
            now = time.monotonic()
            if not exited and exit_fd is None:
                exited = _has_exited(proc.pid)
            if kill_at is None and (exited or (term_at is not None and now - term_at >= KILL_GRACE_S)):
                # the leader is gone but its pipe is open (or it ignored SIGTERM):
                # finish the group off
                _signal_group(proc.pid, signal.SIGKILL)
                kill_at = now
            if kill_at is not None and now - kill_at >= DRAIN_S:
                break
            if expired is None and not exited:
                if timeout and now - start >= timeout:
                    expired = f"timed out after {timeout:g} s"
                elif no_output_timeout and now - last_output >= no_output_timeout:
                    expired = f"no output for {no_output_timeout:g} s"
                if expired is not None:
                    _signal_group(proc.pid, signal.SIGTERM)
                    term_at = now
                    continue
            wait = _next_wait(now, start, last_output, timeout, no_output_timeout, term_at, kill_at, exit_fd)
            for key, _ in selector.select(wait):
                if key.data == "exit":
                    exited = True
                    selector.unregister(exit_fd)
                    continue
                data = os.read(fd, _READ_CHUNK)
                if data:
                    capture.feed(data)
                    last_output = time.monotonic()
                else:
                    eof = True
                    selector.unregister(fd)
    finally:
        selector.close()
        if exit_fd is not None:
            os.close(exit_fd)
    return expired


def _next_wait(now, start, last_output, timeout, no_output_timeout, term_at, kill_at, exit_fd) -> float | None:
    """Seconds until the next deadline (None: wait for I/O or the exit only)."""
    deadlines = []
    if kill_at is not None:
        deadlines.append(kill_at + DRAIN_S)
    elif term_at is not None:
        deadlines.append(term_at + KILL_GRACE_S)
    else:
        if timeout:
            deadlines.append(start + timeout)
        if no_output_timeout:
            deadlines.append(last_output + no_output_timeout)
    if exit_fd is None:
        deadlines.append(now + 0.05)  # no pidfd on this platform: poll for the exit
    return max(0.0, min(deadlines) - now) if deadlines else None


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux ≥ 5.3)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _has_exited(pid: int) -> bool:
    """Has ``pid`` exited?  Leaves it unreaped, so its group id stays ours."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _reap_group(pgid: int) -> None:
    """Reap the group's processes that were handed to us as their subreaper."""
    while True:
        try:
            os.waitpid(-pgid, 0)
        except ChildProcessError:
            return


class _Subreaper:
    """While any gate runs, this process is the reaper of its orphaned
    descendants (Linux ``PR_SET_CHILD_SUBREAPER``): a killed grandchild is then
    reaped here instead of lingering as a zombie where PID 1 does not reap
    (containers).  Counted, so concurrent gates share it; the previous setting
    is restored when the last one ends."""

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


_SUBREAPER = _Subreaper()


class _Capture:
    """Streams output to the log file with secrets masked, keeping only its
    head and a rolling tail in memory."""

    def __init__(self, log_file: BinaryIO):
        self._log = log_file
        self._pending = b""
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.size = 0
        self._newlines = 0
        self._last_byte = b""

    def feed(self, data: bytes) -> None:
        """Take a chunk; whole lines are masked and written, a partial last
        line waits for the next chunk (so a secret split across chunks is
        still seen whole)."""
        data = self._pending + data
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) < _MAX_PENDING:
            self._pending = data
            return
        if cut == 0:
            cut = len(data)
        self._pending = data[cut:]
        self._keep(data[:cut])

    def close(self) -> None:
        """Write out a final line that had no newline."""
        if self._pending:
            self._keep(self._pending)
            self._pending = b""
        self._log.flush()

    @property
    def lines(self) -> int:
        """Lines written so far (a last line without newline counts)."""
        return self._newlines + (1 if self._last_byte not in (b"", b"\n") else 0)

    def _keep(self, block: bytes) -> None:
        masked = redact(block.decode("utf-8", "surrogateescape"))
        block = masked.encode("utf-8", "surrogateescape")
        self._log.write(block)
        self.size += len(block)
        self._newlines += block.count(b"\n")
        self._last_byte = block[-1:]
        room = HEAD_BYTES - len(self._head)
        if room > 0:
            self._head += block[:room]
            block = block[room:]
        if block:
            self._tail.append(block)
            self._tail_size += len(block)
            while self._tail and self._tail_size - len(self._tail[0]) >= TAIL_BYTES:
                self._tail_size -= len(self._tail.popleft())

    def text(self) -> str:
        """The whole output, or for a large one its head and tail joined by a
        ``[... N bytes omitted ...]`` line (both cut at line boundaries)."""
        head, tail = bytes(self._head), b"".join(self._tail)
        if len(head) + len(tail) >= self.size:
            return (head + tail).decode("utf-8", "replace")
        head = head[: head.rfind(b"\n") + 1] or head
        tail = tail[tail.find(b"\n") + 1:] or tail
        omitted = self.size - len(head) - len(tail)
        return (
            head.decode("utf-8", "replace")
            + f"[... {omitted} bytes omitted ...]\n"
            + tail.decode("utf-8", "replace")
        )
