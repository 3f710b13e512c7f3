"""The tree as it was when the step started, and the object store of its bytes.

A :class:`Snapshot` is taken when the step starts.  In a git work tree it
records HEAD plus the id of every dirty or untracked file (the clean ones are
known to git); elsewhere it records the id of every file.  The bytes of the
dirty/untracked text files (all text files outside git) and of every plan
repo file are kept in a content-addressed store under ``.stepkit/objects``,
so that the "before" side of a diff can be read back (:class:`BeforeReader`)
and the plan repo can be put back.
"""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from stepkit.workspace.files import atomic_write, stepkit_dir
from stepkit.workspace.scope import git
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
PLAN_FILE_LIMIT = 5_000_000


class Snapshot(BaseModel):
    """The tree as it was when the step started (JSON-serialisable).

    :ivar mode: ``git`` (HEAD + dirty files), ``files`` (every file) or
        ``plan`` (only the plan repo copy, for restoring it).
    :ivar files: project-relative path → blob id (None = deleted in the work
        tree): in git mode the dirty and untracked files, else every file.
    :ivar stats: ``files`` mode: path → [size, mtime_ns], to skip re-hashing.
    :ivar plan_files: path relative to ``plans_dir`` → blob id.
    :ivar store: the object store holding the kept bytes.
    """

    project_dir: str
    mode: Literal["git", "files", "plan"]
    head: str | None = None
    git_root: str | None = None
    prefix: str = ""
    files: dict[str, str | None] = Field(default_factory=dict)
    stats: dict[str, list[int]] = Field(default_factory=dict)
    plans_dir: str | None = None
    plan_files: dict[str, str] = Field(default_factory=dict)
    store: str
    taken_at: str

    def plan_prefix(self) -> str | None:
        """The plan repo's project-relative prefix (``plans/``), None if outside."""
        if not self.plans_dir:
            return None
        try:
            rel = Path(self.plans_dir).relative_to(self.project_dir).as_posix()
        except ValueError:
            return None
        return "" if rel == "." else rel + "/"


def take_snapshot(
    project_dir: Path, plans_dir: Path | None = None, *, plan_only: bool = False
) -> Snapshot:
    """Record the tree of ``project_dir`` and a byte copy of the plan repo.

    :param project_dir: the project root.
    :param plans_dir: the plan repo (default ``<project_dir>/plans``).
    :param plan_only: copy only the plan repo (cheap; take one right before
        each coder run so restoring the plan repo undoes exactly the coder's
        edits and not the harness's own, such as sweep annotations).
    """
    snap = _empty(project_dir, plans_dir)
    project, plans, store = Path(snap.project_dir), Path(snap.plans_dir or ""), ObjectStore(Path(snap.store))
    snap.plan_files = {rel: store.put_file(plans / rel, PLAN_FILE_LIMIT, text_only=False)
                       for rel in walk_files(plans)}
    if plan_only:
        return snap
    where = git.location(project)
    skip = snap.plan_prefix()
    if where is not None:
        snap.mode, (snap.git_root, snap.prefix) = "git", where
        snap.head, dirty = git.status(Path(snap.git_root), snap.prefix)
        for rel in sorted(dirty):
            if not is_excluded(rel, skip):
                snap.files[rel] = store.put_file(project / rel, STORE_FILE_LIMIT)
    else:
        snap.mode = "files"
        for rel in walk_files(project, EXCLUDED_DIRS):
            if is_excluded(rel, skip):
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
        project_dir=str(project), mode="plan", plans_dir=str(plans),
        store=str(project / ".stepkit" / "objects"),
        taken_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


class ObjectStore:
    """Content-addressed copies of file bytes, keyed by blob id."""

    def __init__(self, root: Path):
        self.root = root
        self.kept = 0

    def put_file(self, path: Path, limit: int, text_only: bool = True) -> str | None:
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
        if (text_only and b"\0" in data[:8192]) or self._path(oid).exists():
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
