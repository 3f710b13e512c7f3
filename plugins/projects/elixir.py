"""Elixir (``mix.exs``): ``mix format`` when ``.formatter.exs`` exists (without
it mix format has no inputs and fails), ``mix credo`` when credo is a
dependency, ``mix compile --warnings-as-errors``, ``mix test``."""

from __future__ import annotations

import re
from pathlib import Path

from stepkit.plugins.projects import _shared

_CREDO = re.compile(r"\{\s*:credo\b")


def commands(project_dir: Path) -> dict[str, str] | None:
    """mix's gate commands; None without a mix.exs."""
    mix = project_dir / "mix.exs"
    if not mix.is_file():
        return None
    found = {"build": "mix compile --warnings-as-errors", "tests": "mix test"}
    if (project_dir / ".formatter.exs").is_file():
        found["format"] = "mix format"
    if _CREDO.search(_shared.read_text(mix)):
        found["lint"] = "mix credo"
    return found


(stepkit_detect_project, stepkit_format_command, stepkit_lint_command,
 stepkit_build_command, stepkit_test_command) = _shared.gate_hooks("elixir", commands)
