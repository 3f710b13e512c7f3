""".NET (a solution ``*.sln``/``*.slnx`` or a project ``*.csproj``/``*.fsproj``/
``*.vbproj`` at the root): ``dotnet format``, ``dotnet build``, ``dotnet test``.

dotnet refuses to guess between several solutions (or, without a solution,
several projects) in one folder, and so does this plugin: the file is named
only when it is the one candidate; with several, there is no command.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from stepkit.plugins.projects import _shared

_SOLUTIONS = ("*.sln", "*.slnx")
_PROJECTS = ("*.csproj", "*.fsproj", "*.vbproj")


def _targets(project_dir: Path) -> list[str]:
    """The solution files, else the project files: what dotnet chooses from."""
    for patterns in (_SOLUTIONS, _PROJECTS):
        found = sorted(p.name for pattern in patterns for p in project_dir.glob(pattern) if p.is_file())
        if found:
            return found
    return []


def commands(project_dir: Path) -> dict[str, str] | None:
    """dotnet's gate commands; ``{}`` when the solution or project is
    ambiguous, None when this is not a .NET project."""
    targets = _targets(project_dir)
    if not targets:
        return None
    if len(targets) > 1:
        return {}
    quoted = shlex.quote(targets[0])
    return {
        "format": f"dotnet format {quoted}",
        "build": f"dotnet build {quoted}",
        "tests": f"dotnet test {quoted}",
    }


(stepkit_detect_project, stepkit_format_command, stepkit_build_command,
 stepkit_test_command) = _shared.gate_hooks("dotnet", commands, gates=("format", "build", "tests"))
