"""Any coding CLI as the coder: ``--coder command:SHELL`` and the presets.

The contract (DESIGN.md, "Command coder"): SHELL runs in the project dir; the
prompt arrives on stdin and in the file named by ``STEPKIT_PROMPT_FILE``; the
environment carries ``STEPKIT_STEP``, ``STEPKIT_PROJECT_DIR`` and
``STEPKIT_PLANS_DIR``.  Its stdout+stderr is the coder's result text.  A
sentinel line (``CODER_COMPLETE`` / ``CODER_REJECTED`` / ``CODER_FAILED``,
the last one wins) decides; otherwise exit 0 is CODER_COMPLETE and any other
exit CODER_FAILED.  Killed by a signal, not startable (exit 127/126 or no
shell), or past ``timeouts.coder`` (its whole process group is killed): the
coder crashed.

:func:`run_process` is the runner shared with the command reviewer: output is
streamed to a redacted log and kept in bounded memory (head and tail).
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stepkit.errors import UsageError
from stepkit.hookspecs import hookimpl
from stepkit.plugins.coders.prompt import build_coder_prompt
from stepkit.redact import redact
from stepkit.results import CoderResult, StageContext

HEAD_CHARS = 64_000
TAIL_CHARS = 256_000
READ_CHUNK = 1 << 20
KILL_GRACE_S = 3.0
READER_GRACE_S = 10.0
DEFAULT_TIMEOUT_S = 3600.0

_SENTINEL_LINE = re.compile(r"^[\s*`_>#-]*(CODER_COMPLETE|CODER_REJECTED|CODER_FAILED)[\s*`_.!]*$")


@dataclass
class ProcessRun:
    """How one external command ran.

    :ivar output: stdout+stderr, redacted; head and tail kept when very long.
    :ivar exit_code: the exit status (negative: killed by that signal; None:
        never started).
    :ivar sentinel: the last sentinel line seen anywhere in the stream.
    :ivar log: the full redacted output on disk.
    """

    command: str
    output: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    timeout_s: float | None = None
    start_error: str | None = None
    sentinel: str | None = None
    log: str | None = None
    duration_s: float = 0.0

    def crash(self, who: str = "the coder") -> str | None:
        """The one-line reason this run counts as a crash, or None."""
        if self.timed_out:
            return f"{who} timed out after {self.timeout_s:g} s; its process group was killed"
        if self.start_error:
            return f"{who} could not start: {self.start_error}"
        if self.exit_code == 127:
            return f"{who} could not start: command not found (exit 127): {self.command}"
        if self.exit_code == 126:
            return f"{who} could not start: not executable (exit 126): {self.command}"
        sig = _signal_of(self.exit_code)
        if sig is not None:
            return f"{who} was killed by signal {_signal_name(sig)}"
        return None


def run_process(
    command: str,
    *,
    cwd: Path,
    stdin_text: str,
    env: dict[str, str],
    timeout: float,
    log_path: Path,
) -> ProcessRun:
    """Run ``command`` through the shell in its own process group.

    ``stdin_text`` is written to its stdin; stdout and stderr are merged,
    redacted line by line, streamed to ``log_path`` and kept head+tail in
    memory.  Past ``timeout`` seconds the group gets SIGTERM, then SIGKILL;
    processes the command leaves behind when it exits are killed too.
    """
    run = ProcessRun(command=command, timeout_s=timeout, log=str(log_path))
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            command, shell=True, cwd=cwd, env=env, start_new_session=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
    except OSError as exc:
        run.start_error = f"{exc.strerror or exc} ({command})"
        log_path.write_text(run.start_error + "\n", encoding="utf-8")
        return run

    group = _own_group(proc)
    kept = _HeadTail()
    with log_path.open("w", encoding="utf-8") as log:
        reader = threading.Thread(target=_pump, args=(proc.stdout, log, kept, run), daemon=True)
        writer = threading.Thread(target=_feed, args=(proc.stdin, stdin_text), daemon=True)
        reader.start()
        writer.start()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            run.timed_out = True
            _kill_group(group, signal.SIGTERM, proc)
            try:
                proc.wait(timeout=KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            _kill_group(group, signal.SIGKILL, proc)
            proc.wait()
        # whatever the command left running would hold the pipe open forever
        _kill_group(group, signal.SIGKILL)
        reader.join(timeout=READER_GRACE_S)
        writer.join(timeout=1)
        if reader.is_alive():  # a process that left the group still holds the pipe
            kept.add("\n[stepkit: stopped reading: a detached process kept the output open]\n")
    run.exit_code = proc.returncode
    run.output = kept.text()
    run.duration_s = round(time.monotonic() - started, 3)
    return run


def find_sentinel(text: str) -> str | None:
    """The last sentinel standing on a line of its own in ``text``."""
    found = None
    for line in text.splitlines():
        match = _SENTINEL_LINE.match(line)
        if match:
            found = match.group(1)
    return found


def coder_spec(ctx: StageContext) -> str:
    """The coder spec of this run: ``--coder``, else the project's setting."""
    return str(ctx.settings.get("coder") or getattr(ctx.config, "coder", None) or "anthropic")


def timeout_of(ctx: StageContext, name: str) -> float:
    """``timeouts.<name>`` from the project's configuration."""
    timeouts = getattr(ctx.config, "timeouts", None)
    return float(getattr(timeouts, name, DEFAULT_TIMEOUT_S))


def run_delegate(ctx: StageContext, command: str, prompt: str, *, name: str, timeout: float) -> ProcessRun:
    """Run an external coder or reviewer with the DESIGN.md contract: the
    prompt on stdin and in ``STEPKIT_PROMPT_FILE``, the STEPKIT_* env, the
    project dir as the working directory."""
    logs = ctx.log_dir()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    base = _unique(logs, f"{name}-{stamp}")
    prompt_text = redact(prompt)
    prompt_file = logs / f"{base}-prompt.md"
    prompt_file.write_text(prompt_text, encoding="utf-8")
    env = {
        **os.environ,
        "STEPKIT_PROMPT_FILE": str(prompt_file),
        "STEPKIT_STEP": str(ctx.state.get("step", "")),
        "STEPKIT_PROJECT_DIR": str(ctx.project_dir),
        "STEPKIT_PLANS_DIR": str(ctx.plans_dir),
    }
    ctx.emit("delegate_started", who=name, command=command)
    run = run_process(command, cwd=ctx.project_dir, stdin_text=prompt_text, env=env,
                      timeout=timeout, log_path=logs / f"{base}.log")
    ctx.emit("delegate_finished", who=name, exit_code=run.exit_code, duration_s=run.duration_s,
             timed_out=run.timed_out, log=run.log)
    return run


def generic_result(run: ProcessRun) -> CoderResult:
    """The command-coder rules: crash, else sentinel, else exit code."""
    crash = run.crash()
    if crash:
        return CoderResult(crashed=True, text=_join(run.output, crash), exit_code=run.exit_code,
                           log=run.log)
    sentinel = run.sentinel
    note = None
    if sentinel is None:
        sentinel = "CODER_COMPLETE" if run.exit_code == 0 else "CODER_FAILED"
        note = f"[stepkit: no sentinel in the output; exit code {run.exit_code} -> {sentinel}]"
    return CoderResult(sentinel=sentinel, text=_join(run.output, note), exit_code=run.exit_code,
                       log=run.log)


@hookimpl
def stepkit_configure(config: Any, settings: dict[str, Any]) -> None:
    """A coder or reviewer spec this plugin owns must be usable before the run
    starts: ``command:`` needs a command, a preset's CLI must be on PATH."""
    from stepkit.plugins.coders.presets import PRESETS

    for role in ("coder", "reviewer"):
        spec = str(settings.get(role) or getattr(config, role, None) or "")
        if spec.startswith("command:") and not spec[len("command:"):].strip():
            raise UsageError(f"--{role} command:SHELL needs a command after 'command:'")
        if spec in PRESETS and shutil.which(spec) is None:
            raise UsageError(f"--{role} {spec}: the '{spec}' CLI is not on PATH (install it, or use command:SHELL)")


@hookimpl
def stepkit_implement(ctx: StageContext) -> CoderResult | None:
    """Answer for ``command:SHELL`` and the presets (claude, codex, aider,
    opencode); None for any other coder spec."""
    from stepkit.plugins.coders.presets import PRESETS

    spec = coder_spec(ctx)
    kind, _, arg = spec.partition(":")
    prompt = build_coder_prompt({**ctx.state, "plans_dir": plans_display(ctx)})
    timeout = timeout_of(ctx, "coder")
    if kind == "command":
        if not arg.strip():
            return CoderResult(crashed=True, text="the coder could not start: --coder command: names no command")
        return generic_result(run_delegate(ctx, arg.strip(), prompt, name="coder", timeout=timeout))
    preset = PRESETS.get(spec)
    if preset is None:
        return None
    run = run_delegate(ctx, preset.command(ctx.settings, review=False), prompt, name=f"coder-{spec}",
                       timeout=timeout)
    return preset.parse(run)


# -- internals -----------------------------------------------------------------


class _HeadTail:
    """The first HEAD_CHARS and the last TAIL_CHARS of a stream."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_len = 0
        self.tail: deque[str] = deque()
        self.tail_len = 0
        self.dropped = 0

    def add(self, piece: str) -> None:
        if self.head_len < HEAD_CHARS:
            self.head.append(piece)
            self.head_len += len(piece)
            return
        self.tail.append(piece)
        self.tail_len += len(piece)
        while self.tail_len > TAIL_CHARS and len(self.tail) > 1:
            gone = self.tail.popleft()
            self.tail_len -= len(gone)
            self.dropped += len(gone)

    def text(self) -> str:
        middle = f"[... {self.dropped} characters omitted; full output in the log ...]\n" if self.dropped else ""
        return "".join(self.head) + middle + "".join(self.tail)


def _pump(stream, log, kept: _HeadTail, run: ProcessRun) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        chunk = stream.readline(READ_CHUNK)
        if not chunk:
            break
        piece = redact(decoder.decode(chunk))
        try:
            log.write(piece)
            log.flush()
        except ValueError:
            return  # the run gave up on this stream and closed the log
        kept.add(piece)
        sentinel = find_sentinel(piece)
        if sentinel:
            run.sentinel = sentinel
    tail = redact(decoder.decode(b"", final=True))
    if tail:
        kept.add(tail)


def _feed(stdin, text: str) -> None:
    try:
        stdin.write(text.encode("utf-8"))
        stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass  # a command that does not read its stdin is fine


def _own_group(proc: subprocess.Popen) -> int | None:
    """The process group ``proc`` leads, checked to be our child's own new
    group (start_new_session), or None: a foreign group is never signalled."""
    pid = getattr(proc, "pid", 0) or 0
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


def _kill_group(group: int | None, sig: int, proc: subprocess.Popen | None = None) -> None:
    """Signal the group; without a verified group, only ``proc`` itself."""
    try:
        if group is not None:
            os.killpg(group, sig)
        elif proc is not None and proc.poll() is None:
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_of(exit_code: int | None) -> int | None:
    """The signal that ended the process: a negative status, or the shell's
    128+N for a child it did not exec."""
    if exit_code is None:
        return None
    if exit_code < 0:
        return -exit_code
    if 128 < exit_code < 128 + signal.NSIG:
        return exit_code - 128
    return None


def _signal_name(sig: int) -> str:
    try:
        return f"{signal.Signals(sig).name} ({sig})"
    except ValueError:
        return str(sig)


def _join(*parts: str | None) -> str:
    return "\n".join(p.rstrip("\n") for p in parts if p)


def _unique(directory: Path, base: str) -> str:
    name, n = base, 1
    while (directory / f"{name}.log").exists():
        n += 1
        name = f"{base}-{n}"
    return name


def plans_display(ctx: StageContext) -> str:
    """The plan repo as the coder's prompt names it (relative when inside the project)."""
    try:
        return Path(ctx.plans_dir).relative_to(ctx.project_dir).as_posix()
    except ValueError:
        return str(ctx.plans_dir)
