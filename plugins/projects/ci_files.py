"""The commands a project's CI configuration runs, each with the file and
line it is written on: GitHub Actions ``run:`` steps (one command per line of
a ``run: |`` block, in the step's ``working-directory``), GitLab CI
``script:`` entries, and the ``entry`` of pre-commit's ``repo: local`` hooks
in the ``system`` language.

The files are read as CI runs them for a push to the default branch on this
machine (:mod:`stepkit.plugins.projects.ci_github`, ``ci_yaml.gitlab``): a
line that cannot run here so is kept with the reason (``skipped``), a step
in PowerShell or cmd and a job only on Windows are left out, and lines of
macOS-only jobs and of workflows or jobs for benchmarks, releases, docs …
come after the others.  Which command is which gate is
:mod:`stepkit.plugins.projects.ci`'s job; nothing here runs a project's tool.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from stepkit.plugins.projects.ci_yaml import CiCommand


class CiRead(NamedTuple):
    """Every command of the project's CI files, and what could not be read."""

    #: in the order CI's lines are weighed: those of workflows and jobs for checking changes
    #: first, then macOS-only ones, then those set aside; in file and line order within each.
    commands: tuple[CiCommand, ...]
    #: what stepkit cannot read (a reusable workflow of another repository).
    notes: tuple[str, ...]


def ci_commands(project_dir: Path) -> tuple[CiCommand, ...]:
    """Every command of the project's CI files (those that cannot run here
    carry the reason, ``skipped``), in :attr:`CiRead.commands`'s order;
    within it ``.github/workflows/*.yml``, then ``.gitlab-ci.yml``, then
    local pre-commit hooks."""
    return read_ci(project_dir).commands


def read_ci(project_dir: Path) -> CiRead:
    """The project's CI files read as CI runs them for a push to the default branch.

    Parsed once per version of the files (every gate hook of one ``detect``
    asks): the cache is keyed by each file's path, size and mtime."""
    files = _ci_files(project_dir)
    stamps = []
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            continue
        stamps.append((str(path), stat.st_size, stat.st_mtime_ns))
    if not stamps:
        return CiRead((), ())
    return _parsed(project_dir, tuple(stamps))


@lru_cache(maxsize=16)
def _parsed(project_dir: Path, stamps: tuple[tuple[str, int, int], ...]) -> CiRead:
    # PyYAML, only when there is a file to read
    from stepkit.plugins.projects import ci_github, ci_yaml

    push = ci_github.github_push(project_dir)
    found: list[CiCommand] = []
    notes: list[str] = []
    for name, _size, _mtime in stamps:
        path = Path(name)
        if path.name == ".gitlab-ci.yml":
            found += ci_yaml.gitlab(path, project_dir, push["ref_name"])
        elif path.name == ".pre-commit-config.yaml":
            found += ci_yaml.precommit(path, project_dir)
        else:
            read = ci_github.workflow(path, project_dir, push)
            found += read.commands
            notes += read.notes
    ordered = sorted(found, key=lambda command: (bool(command.aside), command.on_macos))
    return CiRead(tuple(ordered), tuple(notes))


def _ci_files(project_dir: Path) -> list[Path]:
    workflows = project_dir / ".github" / "workflows"
    found = (
        sorted(p for p in workflows.iterdir() if p.suffix in (".yml", ".yaml") and p.is_file())
        if workflows.is_dir()
        else []
    )
    return found + [
        path
        for path in (project_dir / ".gitlab-ci.yml", project_dir / ".pre-commit-config.yaml")
        if path.is_file()
    ]
