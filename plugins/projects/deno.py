"""Deno (``deno.json`` / ``deno.jsonc``): a task of the gate's name when the
config defines one, else deno's own fmt (on the step's changed files of the
kinds it formats), lint and test (``--frozen`` when git tracks
``deno.lock``, so no gate rewrites it).

The build gate runs only a task (``typecheck``, ``check``, ``build``): there
is no single deno command that builds every project, and ``deno test``
type-checks what it runs anyway.  Tests run with ``-A`` because a gate has no
terminal to answer permission prompts.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_FILES = _shared.changed_files(
    ".js",
    ".jsx",
    ".ts",
    ".tsx",
    ".mjs",
    ".cjs",
    ".mts",
    ".cts",
    ".json",
    ".jsonc",
    ".md",
    ".markdown",
)


class _Deno(NamedTuple):
    tasks: _shared.Targets
    #: ``" --frozen"`` when git tracks deno.lock, else ``""``.
    frozen: str


def _read(project_dir: Path) -> _Deno | None:
    """The config's tasks; None without a deno config."""
    config = _shared.first_file(project_dir, ("deno.json", "deno.jsonc"))
    if config is None:
        return None
    tasks = _shared.read_json(config, comments=True).get("tasks")
    frozen = " --frozen" if _shared.is_tracked(project_dir, "deno.lock") else ""
    return _Deno(_shared.Targets("deno task", tasks if isinstance(tasks, dict) else {}), frozen)


DENO = ProjectType(
    markers=MARKERS[__name__],
    read=_read,
    name="deno",
    format=lambda deno: deno.tasks.command("format", "fmt") or f"deno fmt {_FILES}",
    lint=lambda deno: deno.tasks.command("lint") or "deno lint",
    build=lambda deno: deno.tasks.command("typecheck", "check", "build"),
    tests=lambda deno: deno.tasks.command("test") or f"deno test -A{deno.frozen}",
)
globals().update(DENO.hookimpls())
