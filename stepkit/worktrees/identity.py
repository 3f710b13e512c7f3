"""Who the step's commit (and a ``--merge``) is made as."""

from __future__ import annotations

from pathlib import Path

from stepkit.workspace.scope import git

#: The identity used when the user's git configuration names none.
STEPKIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "stepkit",
    "GIT_AUTHOR_EMAIL": "stepkit@localhost",
    "GIT_COMMITTER_NAME": "stepkit",
    "GIT_COMMITTER_EMAIL": "stepkit@localhost",
}


def commit_identity(top: Path) -> dict[str, str]:
    """The environment a commit in ``top`` needs: nothing when git knows the
    user's name and e-mail, else stepkit's own."""
    if git.run(["var", "GIT_COMMITTER_IDENT"], top) is not None and git.run(
        ["var", "GIT_AUTHOR_IDENT"], top
    ):
        return {}
    return dict(STEPKIT_IDENTITY)
