"""The tree as it was when the step started, and the object store of its bytes.

A :class:`Snapshot` is taken when the step starts.  In a git work tree it
records HEAD plus the id of every dirty or untracked file (the clean ones are
known to git); elsewhere it records the id of every file.  The bytes of the
dirty/untracked text files (all text files outside git) are kept in a
content-addressed store under ``.stepkit/objects``, so that the "before" side
of a diff can be read back (:class:`BeforeReader`).  The plan repo is left
out: it is copied right before each coder round instead
(:func:`~stepkit.workspace.scope.plancopy.copy_plan_repo`).
"""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from stepkit.workspace.files import atomic_write, stepkit_dir
from stepkit.workspace.scope import git
from stepkit.workspace.scope.plancopy import PlanScope
from stepkit.workspace.scope.tree import (
    EXCLUDED_DIRS,
    blob_id,
    data_id,
    is_excluded,
    read_bytes,
    walk_files,
)

STORE_FILE_LIMIT = 1_000_000  # bytes of one text file kept for the diff
STORE_TOTAL_LIMIT = 100_000_000  # bytes kept per snapshot


class Snapshot(BaseModel):
    """The tree as it was when the step started (JSON-serialisable).

    :ivar mode: ``git`` (HEAD + dirty files) or ``files`` (every file).
    :ivar files: project-relative path → blob id (None = deleted in the work
        tree): in git mode the dirty and untracked files, else every file;
        the plan repo left out.
    :ivar stats: ``files`` mode: path → [size, mtime_ns], to skip re-hashing.
    :ivar store: the object store holding the kept bytes.
    """

    project_dir: str
    mode: Literal["git", "files"]
    head: str | None = None
    git_root: str | None = None
    prefix: str = ""
    files: dict[str, str | None] = Field(default_factory=dict)
    stats: dict[str, list[int]] = Field(default_factory=dict)
    plans_dir: str
    store: str
    taken_at: str

    def plan_scope(self) -> PlanScope:
        """Which project paths are the plan repo (never the step's changes)."""
        return PlanScope.of(self.project_dir, self.plans_dir)


def take_snapshot(project_dir: Path, plans_dir: Path | None = None) -> Snapshot:
    """Record the tree of ``project_dir``, the plan repo left out.

    :param project_dir: the project root.
    :param plans_dir: the plan repo (default ``<project_dir>/plans``).
    """
    snap = _empty(project_dir, plans_dir)
    project, store, plan = Path(snap.project_dir), ObjectStore(Path(snap.store)), snap.plan_scope()
    where = git.location(project)
    if where is not None:
        snap.mode, (snap.git_root, snap.prefix) = "git", where
        snap.head, dirty = git.status(Path(snap.git_root), snap.prefix)
        for rel in sorted(dirty):
            if not is_excluded(rel) and not plan.covers(rel):
                snap.files[rel] = store.put_file(project / rel, STORE_FILE_LIMIT)
    else:
        for rel in walk_files(project, EXCLUDED_DIRS):
            if is_excluded(rel) or plan.covers(rel):
                continue
            st = (project / rel).lstat()
            snap.files[rel] = store.put_file(project / rel, STORE_FILE_LIMIT)
            snap.stats[rel] = [st.st_size, st.st_mtime_ns]
    return snap


def head_snapshot(project_dir: Path, plans_dir: Path | None = None) -> Snapshot | None:
    """The tree as HEAD has it, as if the step had started on a clean checkout
    of HEAD: every change in the work tree is then the step's.  None outside git."""
    snap = _empty(project_dir, plans_dir)
    where = git.location(Path(snap.project_dir))
    if where is None:
        return None
    snap.mode, (snap.git_root, snap.prefix) = "git", where
    snap.head = git.head(Path(snap.git_root))
    return snap


def _empty(project_dir: Path, plans_dir: Path | None) -> Snapshot:
    project = Path(project_dir).resolve()
    plans = Path(plans_dir).resolve() if plans_dir is not None else project / "plans"
    return Snapshot(
        project_dir=str(project), mode="files", plans_dir=str(plans),
        store=str(project / ".stepkit" / "objects"),
        taken_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


class ObjectStore:
    """Content-addressed copies of file bytes, keyed by blob id."""

    def __init__(self, root: Path):
        self.root = root
        self.kept = 0

    def put_file(self, path: Path, limit: int) -> str | None:
        """Keep a copy of ``path`` (when small enough) and return its blob id."""
        try:
            st = path.lstat()
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode) or st.st_size > limit or self.kept + st.st_size > STORE_TOTAL_LIMIT:
            return blob_id(path)
        data = read_bytes(path)
        if data is None:
            return None
        oid = data_id(data)
        if b"\0" in data[:8192] or self._path(oid).exists():
            return oid
        try:
            stepkit_dir(self.root.parent.parent)
            atomic_write(self._path(oid), data)
            self.kept += len(data)
        except OSError:
            pass  # an unwritable store only costs the "before" side of the diff
        return oid

    def get(self, oid: str) -> bytes | None:
        """The kept bytes of ``oid``, None when they were not kept."""
        try:
            return self._path(oid).read_bytes()
        except OSError:
            return None

    def _path(self, oid: str) -> Path:
        return self.root / oid[:2] / oid[2:]


class BeforeReader:
    """Bytes of a file as it was before: the object store, else git's objects."""

    def __init__(self, before: Snapshot):
        self.store = ObjectStore(Path(before.store))
        self.git_root = Path(before.git_root) if before.git_root else None

    def read(self, oid: str | None) -> bytes | None:
        """The bytes of ``oid`` (None for None: the file did not exist)."""
        if oid is None:
            return None
        data = self.store.get(oid)
        if data is None and self.git_root is not None:
            data = git.blob(self.git_root, oid)
        return data
