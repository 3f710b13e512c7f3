"""Terminal progress of a run, on stderr (stdout carries the final output).

On a TTY: a live status line (current node, elapsed time, tokens and cost so
far) above a log of finished nodes and gates, drawn with rich.  Not on a TTY:
one plain line per event, easy to grep in CI logs.  ``stepkit run --json``
registers no display at all.

The command registers an instance (``pm.register(ProgressDisplay(...))``);
it is not a default plugin, so library callers of :func:`stepkit.run_step`
get no output they did not ask for.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.markup import escape

import stepkit

STATUS_STYLE = {"pass": "green", "fail": "red", "timeout": "red", "error": "magenta", "not_run": "yellow"}
GATE_NODES = {"verify_format_lint", "verify_build", "verify_tests"}
HUMAN_KINDS = {"approval", "input"}


class ProgressDisplay:
    """A stepkit observer plugin that shows a run's progress."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False)
        self.live = self.console.is_terminal
        self.started = time.monotonic()
        self.status = None
        self.seen_gates: dict[str, int] = {}

    def _elapsed(self) -> str:
        seconds = time.monotonic() - self.started
        return f"{int(seconds // 60):02d}:{seconds % 60:04.1f}"

    @stepkit.hookimpl
    def stepkit_node_started(self, run_id: str, node: str, kind: str, state: dict[str, Any]) -> None:
        if not self.live:
            self.console.print(f"[{self._elapsed()}] {node} ({kind}) started", markup=False)
            return
        if kind in HUMAN_KINDS:
            self._stop_status()  # a question is about to be asked on this terminal
            return
        text = f"[bold]{escape(node)}[/] · {self._elapsed()} · {_usage_text(state)}"
        if self.status is None:
            self.status = self.console.status(text, spinner="dots")
            self.status.start()
        else:
            self.status.update(text)

    @stepkit.hookimpl
    def stepkit_node_finished(
        self, run_id: str, node: str, route: str | None, duration_s: float, state: dict[str, Any]
    ) -> None:
        arrow = f" → {route}" if route else ""
        if self.live:
            self.console.print(f"[green]✓[/] {escape(node)}{escape(arrow)} [dim]({duration_s:.1f}s)[/]")
        else:
            self.console.print(f"[{self._elapsed()}] {node}{arrow} ({duration_s:.2f}s)", markup=False)
        if node in GATE_NODES:
            self._print_new_gates(state)

    @stepkit.hookimpl
    def stepkit_run_finished(self, run_id: str, outcome: str, exit_code: int, output: str) -> None:
        self._stop_status()
        self.console.print(f"[{self._elapsed()}] run {run_id}: {outcome} (exit {exit_code})", markup=False)

    def _print_new_gates(self, state: dict[str, Any]) -> None:
        history = state.get("gate_history", [])
        for gate in history[self.seen_gates.get("count", 0):]:
            status = gate["status"]
            label = "NOT RUN (not evidence of a pass)" if status == "not_run" else status.upper()
            command = gate.get("command") or "no command"
            line = f"  gate {gate['name']}: {label} — {command} ({gate.get('duration_s', 0):.1f}s)"
            if self.live:
                self.console.print(f"[{STATUS_STYLE.get(status, 'white')}]{escape(line)}[/]")
            else:
                self.console.print(line, markup=False)
        self.seen_gates["count"] = len(history)

    def _stop_status(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


def _usage_text(state: dict[str, Any]) -> str:
    usage = state.get("usage") or {}
    tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
    return f"{tokens:,} tokens · ${float(usage.get('cost_usd', 0.0)):.4f}"
