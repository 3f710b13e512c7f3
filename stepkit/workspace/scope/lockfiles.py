"""The lockfiles no gate may change: those git tracks.

A gate that re-resolves dependencies (``uv run``, ``poetry install``,
``npm install`` …) may rewrite a committed lockfile; the gate runner holds
the bytes of these files before each gate and puts them back after it.  A
lockfile git does not track is the tools' business, never guarded.  Which
names are lockfiles is the tools' declarations'
(:attr:`~stepkit.workspace.tools.Tool.lockfiles`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from stepkit.workspace.scope import git
from stepkit.workspace.tools import builtin_tools


def tracked_lockfiles(project_dir: Path, names: Iterable[str] | None = None) -> list[str]:
    """The project-relative paths of the lockfiles git tracks in the project
    (one git process; none outside git).

    :param names: the lockfiles' names (default: those the built-in tools declare)."""
    wanted = tuple(builtin_tools().lockfiles if names is None else names)
    return git.tracked_named(Path(project_dir), wanted) or []
