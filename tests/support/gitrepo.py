"""git in a test's repository, with a fixed identity (no global config needed)."""

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


def commit(root: Path, files: dict[str, str], message: str) -> None:
    """Write ``files`` (relative path → text) in ``root`` and commit them."""
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", "--", *files)
    git(root, "commit", "-qm", message)


def new_repo(root: Path, files: dict[str, str], message: str = "start") -> Path:
    """A repository at ``root`` on branch ``main`` whose first commit holds ``files``."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    commit(root, files, message)
    return root
