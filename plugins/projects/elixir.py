"""Elixir (``mix.exs``): ``mix format`` on the step's changed ``.ex``/``.exs``
files when ``.formatter.exs`` exists (the project's formatter settings), ``mix credo`` when credo is a
dependency, ``mix compile --warnings-as-errors``, ``mix test``."""

from __future__ import annotations

from pathlib import Path

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_CREDO = lazy_compile(r"\{\s*:credo\b")
_FILES = _shared.changed_files(".ex", ".exs")


def _lint(project_dir: Path) -> str | None:
    return "mix credo" if _CREDO.search(_shared.read_text(project_dir / "mix.exs")) else None


ELIXIR = ProjectType(
    markers=MARKERS[__name__],
    name="elixir",
    format=lambda d: f"mix format {_FILES}" if (d / ".formatter.exs").is_file() else None,
    lint=_lint,
    build="mix compile --warnings-as-errors",
    tests="mix test",
)
globals().update(ELIXIR.hookimpls())
