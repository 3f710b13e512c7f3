"""The commands a project's CI configuration runs, each with the file and
line it is written on: GitHub Actions ``run:`` steps (one command per line of
a ``run: |`` block, in the step's ``working-directory``), GitLab CI
``script:`` entries, and the ``entry`` of pre-commit's ``repo: local`` hooks
in the ``system`` language.

Only what can run on this machine as written is kept: a line that uses
GitHub's expressions (``${{ matrix.x }}``, ``${{ secrets.X }}``) or a CI-only
variable, a step in PowerShell or cmd, and a job that runs on Windows only
are left out; a job that runs only on macOS comes after the others.  Which command is which gate is
:mod:`stepkit.plugins.projects.ci_gates`'s job; nothing here runs anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepkit.plugins.projects.ci_yaml import CiCommand


def ci_commands(project_dir: Path) -> tuple[CiCommand, ...]:
    """Every runnable command of the project's CI files, in file then line order:
    ``.github/workflows/*.yml``, then ``.gitlab-ci.yml``, then local pre-commit hooks.

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
        return ()
    from stepkit.plugins.projects.ci_yaml import parsed  # PyYAML, only when there is a file to read

    return parsed(project_dir, tuple(stamps))


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
