"""The progress of ``stepkit run --parallel`` on stderr: one line per run
(its step, what it is doing or how it ended, its elapsed time).

On a TTY the lines are redrawn in place as time passes; elsewhere a plain
line is printed each time a run's state changes, easy to grep in CI logs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from stepkit import shown

#: The colour of a run's line by its outcome (one still running has none).
_STYLE = {"STEP_COMPLETE": "green", "PAUSED": "yellow"}


class RunLines:
    """Shows the runs of :func:`stepkit.worktrees.parallel.run_parallel`."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or shown.console(highlight=False)
        self.started = time.monotonic()
        self.runs: Sequence[Any] = ()
        self.shown: dict[int, str] = {}  # the state each run's plain line last said
        self.live: Live | None = None
        if self.console.is_terminal:  # started with the first run: a refusal draws nothing
            self.live = Live(
                _Lines(self), console=self.console, refresh_per_second=4, transient=False
            )

    def update(self, runs: Sequence[Any]) -> None:
        """The runs now (a TTY redraws them on its own; plain output prints what changed)."""
        self.runs = list(runs)
        if self.live is not None:
            if not self.live.is_started:
                self.live.start()
            self.live.refresh()
            return
        for run in self.runs:
            state = run.state()
            if self.shown.get(run.step) != state:
                self.shown[run.step] = state
                self.console.print(
                    f"[{time.monotonic() - self.started:7.1f}s] {line(run, state)}",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )

    def close(self) -> None:
        """Stop redrawing (the last lines stay); safe to call twice."""
        if self.live is not None and self.live.is_started:
            self.live.stop()
        self.live = None

    def render(self) -> Group:
        texts = []
        for run in self.runs:
            state = run.state()
            style = _STYLE.get(state, "red" if run.result is not None else "")
            texts.append(Text(line(run, state), style=style))
        return Group(*texts)


def line(run: Any, state: str) -> str:
    """``step 2 (Add div): implement · 12.3s``."""
    return f"step {run.step} ({run.title}): {state} · {run.elapsed():.1f}s"


class _Lines:
    """Rendered on every refresh, so the elapsed times keep moving."""

    def __init__(self, lines: RunLines) -> None:
        self.lines = lines

    def __rich__(self) -> Group:
        return self.lines.render()
