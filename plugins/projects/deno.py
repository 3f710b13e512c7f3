"""Deno (``deno.json`` / ``deno.jsonc``): a task of the gate's name when the
config defines one, else deno's own fmt, lint and test.

The build gate runs only a task (``build``, ``typecheck``, ``check``): there
is no single deno command that builds every project, and ``deno test``
type-checks what it runs anyway.  Tests run with ``-A`` because a gate has no
terminal to answer permission prompts.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared

from stepkit.hookspecs import hookimpl

_TASK_NAMES = {
    "format": ("format", "fmt"),
    "lint": ("lint",),
    "build": ("build", "typecheck", "check"),
    "tests": ("test",),
}
_DEFAULTS = {"format": "deno fmt", "lint": "deno lint", "tests": "deno test -A"}


def _commands(project_dir: Path) -> dict[str, str]:
    config = _shared.first_file(project_dir, ("deno.json", "deno.jsonc"))
    if config is None:
        return {}
    tasks = _shared.read_json(config, comments=True).get("tasks")
    tasks = tasks if isinstance(tasks, dict) else {}
    commands = dict(_DEFAULTS)
    for gate, names in _TASK_NAMES.items():
        task = _shared.pick(tasks, names)
        if task:
            commands[gate] = f"deno task {task}"
    return commands


@hookimpl
def stepkit_detect_project(project_dir: Path) -> str | None:
    return "deno" if _commands(project_dir) else None


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
