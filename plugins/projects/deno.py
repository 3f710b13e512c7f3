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
from stepkit.plugins.projects._base import ProjectType


def _tasks(project_dir: Path) -> _shared.Targets | None:
    """The config's tasks; None without a deno config."""
    config = _shared.first_file(project_dir, ("deno.json", "deno.jsonc"))
    if config is None:
        return None
    tasks = _shared.read_json(config, comments=True).get("tasks")
    return _shared.Targets("deno task", tasks if isinstance(tasks, dict) else {})


DENO = ProjectType(
    read=_tasks,
    name="deno",
    format=lambda tasks: tasks.command("format", "fmt") or "deno fmt",
    lint=lambda tasks: tasks.command("lint") or "deno lint",
    build=lambda tasks: tasks.command("build", "typecheck", "check"),
    tests=lambda tasks: tasks.command("test") or "deno test -A",
)
globals().update(DENO.hookimpls())
