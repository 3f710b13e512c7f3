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

stepkit itself changes the user's tree in one place: ``--merge`` merges a
completed step's branch, maybe while a sibling ``--parallel`` run goes on.
Each such merge records, sealed, the digests of the looks just before and
just after it (:func:`record_own_change`); a change that such records lead
through from one look to the other is stepkit's own (:func:`own_change`).
A merge holds :func:`merging` from its look before to its record, and a
run's look holds it shared (:func:`settled_look`): no look falls between a
merge's checkout and its record.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from stepkit.workspace.scope import git
from stepkit.workspace.scope.tree import changed_how, file_ids
from stepkit.workspace.store import GIT_SUBDIR, git_location

#: where stepkit's own changes to a user's tree are recorded, in its repository's git directory
OWN_CHANGES = "own_changes"
#: the lock stepkit's merges into a user's tree hold, beside the records
MERGE_LOCK = "merge.lock"
#: records older than this are removed when a new one is written (no node runs that long)
KEEP_S = 2 * 24 * 3600


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
        return cls(
            files={str(k): str(v) for k, v in files.items()},
            index=str(data["index"]),
            head=str(data["head"]),
        )


def look(top: Path) -> Look:
    """The work tree at ``top`` as it is now."""
    index = git.run(["ls-files", "-z", "-s"], top) or b""
    head = git.run(["rev-parse", "HEAD", "--symbolic-full-name", "HEAD"], top) or b""
    return Look(
        file_ids(top),
        hashlib.sha256(index).hexdigest(),
        git.text(head).strip(),
    )


#: what :func:`differences` calls the index and HEAD
INDEX, HEAD = "the index", "HEAD"


def settled_look(top: Path) -> Look:
    """:func:`look`, never in the middle of a stepkit merge into the tree
    (one under way is waited for, with its record): a sibling run's merge
    would otherwise show as a change without the record that makes it
    stepkit's own."""
    with merging(top, shared=True):
        return look(top)


@contextlib.contextmanager
def merging(top: Path, shared: bool = False) -> Iterator[None]:
    """Hold the lock of stepkit's merges into the tree at ``top``: alone
    for a merge (from its look before to its record; any other merge into
    the repository waits, a ``--parallel`` run's siblings that finish
    together), shared for a look (:func:`settled_look`).  Outside git there
    is nothing to merge into and nothing is held.

    :raises OSError: the lock cannot be made, for a merge; a look goes on
        without it (no merge can take it either)."""
    located = git_location(Path(top).resolve())
    if located is None:
        yield
        return
    path = located[1] / GIT_SUBDIR / MERGE_LOCK
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        if not shared:
            raise
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def differences(before: Look, now: Look) -> list[tuple[str, str]]:
    """(path, ``added``, ``deleted`` or ``changed``) for each file, then
    :data:`INDEX` and :data:`HEAD`, where ``now`` differs from ``before``."""
    found = changed_how(before.files, now.files)
    found += [(INDEX, "changed")] if before.index != now.index else []
    found += [(HEAD, "changed")] if before.head != now.head else []
    return found


def changes(before: Look, now: Look) -> list[str]:
    """:func:`differences` as ``<path> (<how>)``."""
    return [f"{path} ({how})" for path, how in differences(before, now)]


def digest(look: Look) -> str:
    """One hash of everything ``look`` holds."""
    return hashlib.sha256(
        json.dumps(asdict(look), sort_keys=True).encode("utf-8", "surrogateescape")
    ).hexdigest()


def record_own_change(top: Path, before: Look, after: Look) -> None:
    """Record that stepkit itself took the tree at ``top`` from ``before`` to ``after``."""
    from stepkit.workspace.seal import write_sealed

    directory = _own_changes_dir(top)
    if directory is None:
        return
    directory.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for old in directory.glob("*.json"):
        try:
            if now - old.stat().st_mtime > KEEP_S:
                old.unlink()
        except OSError:
            pass
    path = directory / f"{time.time_ns()}-{os.getpid()}.json"
    write_sealed(path, json.dumps({"before": digest(before), "after": digest(after)}))


def own_change(top: Path, before: Look, now: Look) -> bool:
    """Whether stepkit's own recorded changes lead from ``before`` to ``now``
    (a record whose seal does not verify leads nowhere)."""
    from stepkit.workspace.seal import SealBroken, read_sealed

    directory = _own_changes_dir(top)
    if directory is None or not directory.is_dir():
        return False
    leads: dict[str, set[str]] = {}
    for path in directory.glob("*.json"):
        try:
            record = json.loads(read_sealed(path))
            leads.setdefault(str(record["before"]), set()).add(str(record["after"]))
        except (OSError, SealBroken, ValueError, KeyError, TypeError):
            continue
    start, goal = digest(before), digest(now)
    seen, frontier = {start}, [start]
    while frontier:
        for nxt in leads.get(frontier.pop(), ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return False


def _own_changes_dir(top: Path) -> Path | None:
    located = git_location(Path(top).resolve())
    return located[1] / GIT_SUBDIR / OWN_CHANGES if located is not None else None
