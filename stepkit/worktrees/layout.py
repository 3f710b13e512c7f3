"""Where ``--worktree`` work trees live and what their branches are called.

Work trees live under :func:`~stepkit.workspace.files.state_home`, outside
the user's tree: ``worktrees/<repo key>/<NN>-<slug>``, the key naming the
repository by its git common dir (two clones never share a directory).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from stepkit.workspace.files import state_home

#: The prefix of every branch a ``--worktree`` run makes.
BRANCH_PREFIX = "stepkit/"


def step_name(number: int, slug: str) -> str:
    """``01-add-mul``: the step as its branch and work tree name it."""
    return f"{number:02d}-{slug}"


def branch_name(number: int, slug: str) -> str:
    """``stepkit/01-add-mul``."""
    return BRANCH_PREFIX + step_name(number, slug)


def worktrees_home(common_dir: Path) -> Path:
    """The directory holding the work trees of the repository whose git
    common dir is ``common_dir``: its name, then a hash of its path."""
    common = Path(common_dir).resolve()
    name = common.parent.name if common.name == ".git" else common.name.removesuffix(".git")
    key = hashlib.sha256(str(common).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return state_home() / "worktrees" / f"{name or 'repo'}-{key}"
