"""The gate runner: run a verification command and record the evidence.

Each gate's command runs through :func:`stepkit.workspace.process.run`: with the shell
in the project directory, in its own process group, under a wall-clock limit
and a no-output limit (on expiry the whole group is killed), its output
(stdout and stderr merged) streamed to ``<log_dir>/<gate>-<n>.log`` with
secrets masked and kept in bounded memory for the evidence.

Status is decided here from the exit code, never by a model: ``pass`` (0),
``fail`` (any other code, or killed by a signal), ``timeout`` (a limit
expired), ``error`` (exit 126/127 or the command could not be started: the
tool is missing or not executable — an environment fault, not the code's),
``not_run`` (no command: NOT evidence of a pass).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from stepkit.config import Config
from stepkit.records import GATE_ORDER, GateResult
from stepkit.workspace import process
from stepkit.workspace.evidence import condense, summary_of
from stepkit.workspace.gate_commands import resolve_command
from stepkit.workspace.process import NOT_RUNNABLE, ProcessResult, signal_name, signal_of


def run_gates(
    pm,
    project_dir: Path,
    config: Config,
    log_dir: Path,
    gates: Iterable[str] = GATE_ORDER,
    on_gate: Callable[[GateResult], None] | None = None,
    on_start: Callable[[str, str | None], None] | None = None,
) -> list[GateResult]:
    """Run the requested gates in protocol order (format first, so the other
    gates' evidence describes the formatted bytes).

    :param gates: the gates to run (any order; unknown names raise ValueError).
    :param on_gate: called with each result as soon as its gate finished.
    :param on_start: called with ``(gate, command)`` before each gate runs.
    :return: one :class:`GateResult` per gate, in run order.
    """
    wanted = set(gates)
    unknown = wanted - set(GATE_ORDER)
    if unknown:
        raise ValueError(f"unknown gate(s): {', '.join(sorted(unknown))}")
    limits = config.timeouts
    results = []
    for gate in (g for g in GATE_ORDER if g in wanted):
        command, plugin = resolve_command(pm, gate, Path(project_dir), config)
        if on_start is not None:
            on_start(gate, command)
        result = run_gate(
            gate, command, plugin, project_dir, log_dir,
            timeout=getattr(limits, gate), no_output_timeout=limits.no_output, pm=pm,
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
    result = process.run(
        command, cwd=Path(project_dir), env=env, timeout=timeout, no_output_timeout=no_output_timeout,
        log_path=_new_log(Path(log_dir), name),
    )
    status, note, exit_code, headline = _classify(result)
    output = result.output
    evidence = condense(
        pm, name, command, output, exit_code, result.log, total_lines=result.lines, note=note,
    )
    summary = summary_of(evidence, output) or (f"no output (exit code {exit_code})" if exit_code is not None else "")
    if headline:
        alone = status == "timeout" or result.start_error is not None or not summary
        summary = headline if alone else f"{headline}: {summary}"
    return GateResult(
        name=name, status=status, command=command, plugin=plugin, exit_code=exit_code,
        duration_s=result.duration_s, log=result.log, summary=summary, evidence=evidence,
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


def _classify(result: ProcessResult) -> tuple[str, str | None, int | None, str | None]:
    """(status, note for the evidence, recorded exit code, summary headline)."""
    fault = " — an environment fault, not a failure of the code"
    if result.start_error is not None:
        headline = f"could not start the command: {result.start_error}"
        return "error", f"error: {headline}{fault}", None, headline
    if result.expired is not None:
        return "timeout", f"{result.expired}; its process group was killed", None, result.expired
    code = result.exit_code
    assert code is not None
    if code in NOT_RUNNABLE:
        why = f"tool missing or not executable (exit {code}: {NOT_RUNNABLE[code]})"
        return "error", f"error: {why}{fault}", code, why
    sig = signal_of(code)
    if sig is not None:
        killed = f"killed by signal {signal_name(sig)}"
        return "fail", killed, code, killed
    return ("pass" if code == 0 else "fail"), None, code, None


def _new_log(log_dir: Path, name: str) -> Path:
    """Claim ``<log_dir>/<name>-<n>.log`` with the first free n (exclusive
    create, so two runners never share a file)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        path = log_dir / f"{name}-{n}.log"
        try:
            path.open("xb").close()
            return path
        except FileExistsError:
            n += 1
