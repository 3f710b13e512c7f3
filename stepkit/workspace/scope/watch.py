"""Did anything touch stepkit's run store while a coder ran?

A :class:`StoreWatch` records the lstat signature (type, inode, size, mtime,
ctime) of a few paths, and of everything below some of them, and later
names what was added, deleted or changed there.  Run before and after a
coder round on what the scope guard and the checkpoint depend on, it makes
touching the run store a tamper flag (:func:`run_store_paths`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from stepkit.text import first_of
from stepkit.workspace.scope.tree import changed_how, shown_path
from stepkit.workspace.store import store_dir

MAX_NAMED = 5  # paths named in one flag

#: ``{path: signature}``, what the watches compare
Signatures = dict[str, tuple[int, ...]]


def signature(st: os.stat_result) -> tuple[int, ...]:
    """What a write changes in a path's lstat: a file's type, inode, size,
    times (``ctime`` cannot be set back); a directory's type and inode only
    (its times change with what it holds)."""
    if stat.S_ISDIR(st.st_mode):
        return (stat.S_IFDIR, st.st_ino)
    return (stat.S_IFMT(st.st_mode), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def run_store_paths(project_dir: Path, run_dir: Path) -> tuple[list[Path], list[Path]]:
    """(the paths watched themselves, the trees watched with all they hold)
    that stepkit reads back after a coder round: the way to the run
    directory, its checkpoint and step-start snapshot, the object store and
    the copies restores kept.  The run's logs and events, which stepkit
    itself writes while the coder runs, are not among them."""
    store = store_dir(project_dir)
    run = Path(run_dir)
    paths = [store, store / "runs", run, run / "state.json", run / "scope_snapshot.json"]
    return paths, [store / "objects", run / "displaced"]


class StoreWatch:
    """The signatures of ``paths`` and of everything under ``trees``, now."""

    def __init__(self, project_dir: Path, paths: Iterable[Path], trees: Iterable[Path]):
        self.project = Path(project_dir)
        self.paths, self.trees = list(paths), list(trees)
        self.before = self._signatures()

    def changes(self) -> list[str]:
        """``<path> (added|deleted|changed)`` for each path whose signature
        differs from when the watch started (project-relative; what lies
        under an added or deleted directory is not named again)."""
        now = self._signatures()
        seen: dict[str, str] = {}
        named = []
        for path, how in changed_how(self.before, now):
            seen[path] = how
            if how == "changed" or seen.get(path.rpartition("/")[0]) != how:
                named.append(f"{path} ({how})")
        return named

    def _signatures(self) -> Signatures:
        found: Signatures = {}
        for path in self.paths:
            self._sign(path, found)
        for tree in self.trees:
            if self._sign(tree, found):
                for dirpath, dirnames, filenames in os.walk(tree):
                    for name in (*dirnames, *filenames):
                        self._sign(Path(dirpath) / name, found)
        return found

    def _sign(self, path: Path, found: Signatures) -> bool:
        """Record ``path``'s signature; True when it is a real directory."""
        try:
            st = path.lstat()
        except OSError:
            return False
        found[shown_path(path, self.project)] = signature(
            st
        )  # a directory's: stepkit adds its logs there
        return stat.S_ISDIR(st.st_mode)


def store_flag(changes: list[str]) -> str:
    """The tamper flag of a coder round that touched the run store."""
    return f"the coder touched stepkit's run store: {first_of(changes, MAX_NAMED)}"
