"""Terminal progress of a run, on stderr (stdout carries the final output).

What it shows are the protocol's stages (orient, implement, sweep, review,
handoff: the run's ``stage_nodes`` setting says which nodes run them), each
with its result, its time and the run's running total of time, tokens and
cost, and each gate's verdict as it is reached.  The graph's routing nodes
(``route_staleness``, ``fix_loop_gate``, …) are left out, unless one faults,
and shown with ``--verbose``, which prints every node as before.

On a TTY: a live status line (the current stage, its elapsed time, the run's
elapsed time, tokens and cost so far; redrawn as time passes) below that log,
drawn with rich.  Not on a TTY: the same lines, plain, easy to grep in CI
logs (with ``--verbose``: one line per node started and finished).
``stepkit run --json`` registers no display at all.

The command registers an instance (``pm.register(ProgressDisplay(...))``)
and calls :meth:`ProgressDisplay.close` when the command ends, however it
ends (Ctrl-C included, so the terminal gets its cursor back); it is not a
default plugin, so library callers of :func:`stepkit.run_step` get no
output they did not ask for.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.text import Text

import stepkit
from stepkit import shown
from stepkit.records import FAILED_STATUSES, GateResult

STATUS_STYLE = {
    "pass": "green",
    "fail": "red",
    "timeout": "red",
    "error": "magenta",
    "not_run": "yellow",
}
HUMAN_KINDS = {"approval", "input"}


class ProgressDisplay:
    """A stepkit observer plugin that shows a run's progress."""

    def __init__(self, console: Console | None = None, verbose: bool = False) -> None:
        self.console = console or shown.console(highlight=False)
        self.verbose = verbose
        self.stages: dict[str, str] = {}  # node → the stage it runs
        self.live = self.console.is_terminal
        self.started = time.monotonic()
        self.status: Status | None = None
        self.node: str | None = None
        self.node_started = self.started
        self.usage: dict[str, Any] = {}
        self.seen_gates: int | None = None  # gates already shown (a resumed run's earlier ones too)
        self._fault_before: Any = None
        self._coder_before: Any = None
        self.budget_line: str | None = None

    @stepkit.hookimpl(trylast=True)
    def stepkit_configure(
        self, config: Any, settings: dict[str, Any], presets: Mapping[str, Any]
    ) -> None:
        """The run's model budget, said when its first node starts (a run that
        never starts, on a usage error, says nothing); none for a run that
        calls no model."""
        from stepkit.plugins.llm.budget import describe

        self.budget_line = describe(settings) if _calls_a_model(settings, presets) else None
        self.stages = {
            node: stage
            for stage, nodes in (settings.get("stage_nodes") or {}).items()
            for node in nodes
        }

    @stepkit.hookimpl
    def stepkit_node_started(
        self, run_id: str, node: str, kind: str, state: dict[str, Any]
    ) -> None:
        if self.budget_line:
            self.console.print(escape(self.budget_line), highlight=False, soft_wrap=True)
            self.budget_line = None
        self.node, self.node_started = node, time.monotonic()
        self.usage = dict(state.get("usage") or {})
        self._fault_before = state.get(f"{node}_fault")
        self._coder_before = state.get("coder_result")
        if self.seen_gates is None:
            self.seen_gates = len(state.get("gate_history", []))
        if not self.live:
            if self.verbose:
                self._plain(f"{node} ({kind}) started")
            return
        if kind in HUMAN_KINDS:
            self._stop_status()  # a question is about to be asked on this terminal
        elif self.status is None:
            self.status = self.console.status(_StatusLine(self), spinner="dots")
            self.status.start()

    @stepkit.hookimpl
    def stepkit_node_finished(
        self, run_id: str, node: str, route: str | None, duration_s: float, state: dict[str, Any]
    ) -> None:
        self.usage = dict(state.get("usage") or {})
        gates = self._new_gates(state)  # whichever node ran them
        faulted = state.get(f"{node}_fault") not in (None, self._fault_before)
        if self.verbose:
            self._node_line(node, route, duration_s, gates, faulted)
        elif node in self.stages or faulted:
            coder = state.get("coder_result") or {}
            said = coder.get("sentinel") if coder != (self._coder_before or {}) else None
            result = f" {said}" if said else ""  # the stage that ran the coder: its sentinel
            self._stage_line(self.stages.get(node, node), result, duration_s, faulted)
        for gate in gates:
            if self.live:
                style = STATUS_STYLE.get(gate["status"], "white")
                self.console.print(f"[{style}]{escape(_gate_line(gate))}[/]")
            else:
                self.console.print(_gate_line(gate), markup=False, soft_wrap=True)

    def _node_line(
        self, node: str, route: str | None, duration_s: float, gates: list[Any], faulted: bool
    ) -> None:
        """``--verbose``: the node, the route it took and its time."""
        arrow = f" → {route}" if route else ""
        if not self.live:
            self._plain(f"{node}{arrow} ({duration_s:.2f}s)")
            return
        if any(g["status"] in FAILED_STATUSES for g in gates):
            mark = "[red]✗[/]"
        elif faulted:
            mark = "[yellow]![/]"  # the node faulted; the route is its fallback
        else:
            mark = "[green]✓[/]"
        self.console.print(f"{mark} {escape(node)}{escape(arrow)} [dim]({duration_s:.1f}s)[/]")

    def _stage_line(self, stage: str, result: str, duration_s: float, faulted: bool) -> None:
        """A stage: its result, its time, the run's time, tokens and cost so far."""
        totals = f"run {_clock(self._elapsed())} · {_usage_text(self.usage)}"
        if not self.live:
            mark = "!" if faulted else "✓"
            self._plain(f"{mark} {stage}{result} {duration_s:.2f}s · {totals}")
            return
        mark = "[yellow]![/]" if faulted else "[green]✓[/]"
        self.console.print(
            f"{mark} [bold]{escape(stage):<9}[/]{escape(result)} "
            f"[dim]{duration_s:.1f}s · {escape(totals)}[/]"
        )

    @stepkit.hookimpl
    def stepkit_run_finished(self, run_id: str, outcome: str, exit_code: int, output: str) -> None:
        self._stop_status()
        line = (
            f"run {run_id}: {outcome} (exit {exit_code}) · {_clock(self._elapsed())} this session · "
            f"{_usage_text(self.usage)}"
        )
        if self.live:
            style = "green" if exit_code == 0 else "yellow" if outcome == "PAUSED" else "red"
            self.console.print(f"[bold {style}]{escape(line)}[/]")
        else:
            self._plain(line)

    def close(self) -> None:
        """Stop the live line (restoring the cursor); safe to call twice."""
        self._stop_status()

    def status_text(self) -> Text:
        """The live line: current node, elapsed times, tokens and cost."""
        now = time.monotonic()
        text = Text()
        node = self.node or "starting"
        text.append(node if self.verbose else self.stages.get(node, node), style="bold")
        text.append(
            f" {now - self.node_started:.1f}s · run {_clock(now - self.started)} · {_usage_text(self.usage)}"
        )
        return text

    def _plain(self, text: str) -> None:
        """One line, never wrapped, for logs."""
        self.console.print(f"[{_clock(self._elapsed())}] {text}", markup=False, soft_wrap=True)

    def _elapsed(self) -> float:
        return time.monotonic() - self.started

    def _new_gates(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        history = state.get("gate_history", [])
        new = history[self.seen_gates or 0 :]
        self.seen_gates = len(history)
        return new

    def _stop_status(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


class _StatusLine:
    """Rendered on every refresh of the spinner, so the times keep moving
    while a long node (a coder, a test suite) runs."""

    def __init__(self, display: ProgressDisplay) -> None:
        self.display = display

    def __rich__(self) -> Text:
        return self.display.status_text()


def _gate_line(gate: dict[str, Any]) -> str:
    return f"  gate {GateResult.model_validate(gate).status_line()}"


def _clock(seconds: float) -> str:
    return f"{int(seconds // 60):02d}:{seconds % 60:04.1f}"


def _usage_text(usage: dict[str, Any]) -> str:
    tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
    return f"{tokens:,} tokens · ${float(usage.get('cost_usd', 0.0)):.4f}"


def _calls_a_model(settings: dict[str, Any], presets: Mapping[str, Any]) -> bool:
    """Can the run spend its model budget: an engine other than the scripted
    one, or a coding-CLI coder or reviewer."""
    from stepkit.plugins.coders.command import builtin_spec, delegate_spec

    if not str(settings.get("engine") or "anthropic").startswith("scripted:"):
        return True
    return any(
        (builtin_spec(delegate_spec(settings, role), presets) or ("",))[0] == "preset"
        for role in ("coder", "reviewer")
    )
