"""The user's own work tree, looked at before and after a ``--worktree`` run's
coder or gates run.

stepkit writes nothing in the user's tree while a step runs in its own work
tree, but the coder it judges runs as the user, and a linked work tree names
the user's repository (``git rev-parse --git-common-dir``).  A :class:`Look`
holds what a write there would change: the id of every tracked and
untracked non-ignored file (:func:`~stepkit.workspace.scope.tree.file_ids`,
which hashes only what git's index does not vouch for), the index's
entries and HEAD.  :func:`changes` names what differs between two looks.
Looking never writes: no git command here refreshes the index.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path

from stepkit.workspace.scope import git
from stepkit.workspace.scope.tree import changed_between, file_ids

#: paths named in one flag at most
MAX_NAMED = 10


@dataclass(frozen=True)
class Look:
    """One look at a work tree.

    :ivar files: ``{path: content id}`` of its tracked and untracked non-ignored files.
    :ivar index: a digest of the index's entries (mode, object id, stage, path).
    :ivar head: the commit HEAD names and the ref it goes through.
    """

    files: dict[str, str]
    index: str
    head: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Look:
        """A look from :meth:`as_dict`'s form.

        :raises KeyError, TypeError, ValueError: it is not one."""
        files = data["files"]
        if not isinstance(files, dict):
            raise TypeError("files is not a mapping")
        return cls(files={str(k): str(v) for k, v in files.items()}, index=str(data["index"]),
                   head=str(data["head"]))


def look(top: Path) -> Look:
    """The work tree at ``top`` as it is now."""
    index = git.run(["ls-files", "-z", "-s"], top) or b""
    head = git.run(["rev-parse", "HEAD", "--symbolic-full-name", "HEAD"], top) or b""
    return Look(file_ids(top), hashlib.sha256(index).hexdigest(), head.decode("utf-8", "surrogateescape").strip())


def changes(before: Look, now: Look) -> list[str]:
    """``<path> (added|deleted|changed)`` for each file, then ``the index
    (changed)`` and ``HEAD (changed)``, where ``now`` differs from ``before``."""
    named = []
    for path in changed_between(before.files, now.files):
        how = "added" if path not in before.files else "deleted" if path not in now.files else "changed"
        named.append(f"{path} ({how})")
    if before.index != now.index:
        named.append("the index (changed)")
    if before.head != now.head:
        named.append("HEAD (changed)")
    return named


def shown(named: list[str]) -> str:
    """``named`` in one line, the first :data:`MAX_NAMED` of them."""
    more = f" and {len(named) - MAX_NAMED} more" if len(named) > MAX_NAMED else ""
    return ", ".join(named[:MAX_NAMED]) + more
