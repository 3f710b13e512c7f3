""".NET (a solution ``*.sln``/``*.slnx`` or a project ``*.csproj``/``*.fsproj``/
``*.vbproj`` at the root): ``dotnet format`` (only the step's changed ``.cs`` and
``.vb`` files, through ``--include``), ``dotnet build``, ``dotnet test``.

dotnet refuses to guess between several solutions (or, without a solution,
several projects) in one folder, and so does this plugin: the file is named
only when it is the one candidate; with several, there is no command.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from stepkit import quoting
from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_SOLUTIONS = ("*.sln", "*.slnx")
_PROJECTS = ("*.csproj", "*.fsproj", "*.vbproj")


def _targets(project_dir: Path) -> list[str] | None:
    """The solution files, else the project files: what dotnet chooses from;
    None when there are none (not a .NET project)."""
    for patterns in (_SOLUTIONS, _PROJECTS):
        found = sorted(
            p.name for pattern in patterns for p in project_dir.glob(pattern) if p.is_file()
        )
        if found:
            return found
    return None


def _dotnet(verb: str, options: str = "") -> Callable[[list[str]], str | None]:
    """``dotnet VERB TARGET OPTIONS`` when there is one target; None when it is ambiguous."""
    return lambda targets: (
        f"{quoting.shell(['dotnet', verb, targets[0]])}{options}" if len(targets) == 1 else None
    )


DOTNET = ProjectType(
    markers=MARKERS[__name__],
    read=_targets,
    name="dotnet",
    format=_dotnet("format", f" --include {_shared.changed_files('.cs', '.vb')}"),
    build=_dotnet("build"),
    tests=_dotnet("test"),
)
globals().update(DOTNET.hookimpls())
