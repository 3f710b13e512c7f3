"""Elixir (``mix.exs``): ``mix format`` when ``.formatter.exs`` exists (without
it mix format has no inputs and fails), ``mix credo`` when credo is a
dependency, ``mix compile --warnings-as-errors``, ``mix test``."""

from __future__ import annotations

import re
from pathlib import Path

from stepkit.plugins.projects import _shared

from stepkit.hookspecs import hookimpl

_CREDO = re.compile(r"\{\s*:credo\b")


def _commands(project_dir: Path) -> dict[str, str]:
    mix = project_dir / "mix.exs"
    if not mix.is_file():
        return {}
    commands = {"build": "mix compile --warnings-as-errors", "tests": "mix test"}
    if (project_dir / ".formatter.exs").is_file():
        commands["format"] = "mix format"
    if _CREDO.search(_shared.read_text(mix)):
        commands["lint"] = "mix credo"
    return commands


@hookimpl
def stepkit_detect_project(project_dir: Path) -> str | None:
    return "elixir" if _commands(project_dir) else None


@hookimpl
def stepkit_format_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("format")


@hookimpl
def stepkit_lint_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("lint")


@hookimpl
def stepkit_build_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("build")


@hookimpl
def stepkit_test_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("tests")
