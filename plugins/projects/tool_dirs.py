"""The project's own tool directories, which the gates put first on PATH:
a virtualenv at the project's top, of any name (``.venv``, ``venv``, the
``.env`` some projects' docs make: its ``pyvenv.cfg`` says it is one),
``node_modules/.bin``, and a ``bin/`` that the project's task runner calls."""

from __future__ import annotations

from pathlib import Path

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.workspace.scope.virtualenvs import top_level

_TASK_FILES = (
    "Makefile",
    "makefile",
    "GNUmakefile",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    "Taskfile.yaml",
)
_CALLS_BIN = lazy_compile(r"(?<![\w./-])(?:\./)?bin/[\w.-]+")


@hookimpl
def stepkit_tool_dirs(project_dir: Path) -> list[str]:
    """Each directory that exists, with why it is the project's."""
    dirs = [f"{env}/bin" for env in top_level(project_dir) if (project_dir / env / "bin").is_dir()]
    if (project_dir / "node_modules" / ".bin").is_dir():
        dirs.append("node_modules/.bin")
    if (project_dir / "bin").is_dir() and any(
        _calls_bin(project_dir / name) for name in _TASK_FILES
    ):
        dirs.append("bin")
    return dirs


def _calls_bin(path: Path) -> bool:
    try:
        return _CALLS_BIN.search(path.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False
