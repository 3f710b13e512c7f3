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

_TASK_NAMES = {
    "format": ("format", "fmt"),
    "lint": ("lint",),
    "build": ("build", "typecheck", "check"),
    "tests": ("test",),
}
_DEFAULTS = {"format": "deno fmt", "lint": "deno lint", "tests": "deno test -A"}


def commands(project_dir: Path) -> dict[str, str] | None:
    """A task per gate, else deno's own; None without a deno config."""
    config = _shared.first_file(project_dir, ("deno.json", "deno.jsonc"))
    if config is None:
        return None
    tasks = _shared.read_json(config, comments=True).get("tasks")
    tasks = tasks if isinstance(tasks, dict) else {}
    return {**_DEFAULTS, **_shared.runner_commands(tasks, _TASK_NAMES, "deno task")}


(stepkit_detect_project, stepkit_format_command, stepkit_lint_command,
 stepkit_build_command, stepkit_test_command) = _shared.gate_hooks("deno", commands)
