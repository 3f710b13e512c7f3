"""Built-in ``stepkit_run_observers``: the terminal progress display of
``stepkit run`` and ``stepkit resume`` (:mod:`stepkit.plugins.observers.progress`,
imported only when a command asks for it, so building a plugin manager never
pays for the terminal library)."""

from __future__ import annotations

from typing import Any

from stepkit.hookspecs import hookimpl


@hookimpl
def stepkit_run_observers(command: str, verbose: bool) -> list[Any]:
    """A fresh progress display on stderr for the run."""
    from stepkit.plugins.observers.progress import ProgressDisplay

    return [ProgressDisplay(verbose=verbose)]
