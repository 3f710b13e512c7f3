"""git in a test's repository, with a fixed identity (no global config needed).

The suite's one way to make a repository: :func:`init_repo` (files written,
``git init`` on ``main``, everything committed), :func:`commit_all` and
:func:`commit` for the commits after it, :func:`git` for the rest.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def git(root: Path, *args: str) -> str:
    """``git ARGS`` in ``root``: its stdout (a failure raises)."""
    return subprocess.run(
        ["git", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **IDENTITY},
    ).stdout


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path → text) under ``root``, making their folders."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def commit_all(root: Path, message: str) -> None:
    """Commit everything in ``root``'s work tree (what ``.gitignore`` leaves)."""
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def commit(root: Path, files: dict[str, str], message: str) -> None:
    """Write ``files`` (relative path → text) in ``root`` and commit them."""
    write_files(root, files)
    git(root, "add", "--", *files)
    git(root, "commit", "-qm", message)


def init_repo(root: Path, files: dict[str, str] | None = None, message: str = "start") -> Path:
    """A repository at ``root`` on branch ``main`` whose first commit holds
    ``files`` and whatever ``root`` held already."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write_files(root, files or {})
    commit_all(root, message)
    return root
