"""The lockfiles no gate may change: those git tracks.

A gate that re-resolves dependencies (``uv run``, ``poetry install``,
``npm install`` …) may rewrite a committed lockfile; the gate runner holds
the bytes of these files before each gate and puts them back after it.  A
lockfile git does not track is the tools' business, never guarded.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.workspace.scope import git

#: The lockfile names of the package managers the project types use.
LOCKFILE_NAMES = (
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "Pipfile.lock",
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "deno.lock",
    "Gemfile.lock",
    "composer.lock",
    "go.sum",
    "go.work.sum",
    "mix.lock",
    "pubspec.lock",
    "Package.resolved",
    "packages.lock.json",
    "gradle.lockfile",
    "conan.lock",
    "flake.lock",
)


def tracked_lockfiles(project_dir: Path) -> list[str]:
    """The project-relative paths of the lockfiles git tracks in the project
    (one git process; none outside git)."""
    return git.tracked_named(Path(project_dir), LOCKFILE_NAMES) or []
