"""The tree as it was when the step started, and the object store of its bytes.

A :class:`Snapshot` is taken when the step starts.  In a git work tree it
records HEAD plus the id of every dirty or untracked file (the clean ones are
known to git); elsewhere it records the id of every file.  The bytes of the
dirty/untracked text files (all text files outside git) are kept in a
content-addressed store, ``objects/`` of the run store, so that the "before" side
of a diff can be read back (:class:`BeforeReader`).  Checked-out submodules
are looked at from the inside, as work trees of their own.  The plan repo is
left out: it is copied right before each coder round instead
(:func:`~stepkit.workspace.scope.plancopy.copy_plan_repo`).

A run persists its snapshot (:func:`save_snapshot`) and keeps the digest in
its checkpoint; before each coder round it loads it back, checked against
that digest, with every kept byte held in memory (:func:`load_snapshot`), so
that whatever the coder does to the run store the changes are computed from
what the step started with; afterwards :meth:`Snapshot.persist` puts back on
disk anything the coder took away, for a later resume.
"""

from __future__ import annotations

import hashlib
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, PrivateAttr

from stepkit.jsontext import model_from_json, model_json
from stepkit.models import Model
from stepkit.workspace.files import real_dir, replace_entry
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
from stepkit.workspace.store import objects_dir, write_anchor

STORE_FILE_LIMIT = 1_000_000  # bytes of one text file kept for the diff
STORE_TOTAL_LIMIT = 100_000_000  # bytes kept per snapshot


class Snapshot(Model):
    """The tree as it was when the step started (JSON-serialisable).

    :ivar mode: ``git`` (HEAD + dirty files) or ``files`` (every file).
    :ivar files: project-relative path → blob id (None = deleted in the work
        tree): in git mode the dirty and untracked files, else every file;
        the plan repo left out.
    :ivar stats: ``files`` mode: path → [size, mtime_ns], to skip re-hashing.
    :ivar submodules: git mode: each checked-out submodule's place in the
        project (``vendor/lib/``) → its HEAD.
    :ivar store: the object store holding the kept bytes.
    """

    project_dir: str
    mode: Literal["git", "files"]
    head: str | None = None
    git_root: str | None = None
    prefix: str = ""
    files: dict[str, str | None] = Field(default_factory=dict)
    stats: dict[str, list[int]] = Field(default_factory=dict)
    submodules: dict[str, str | None] = Field(default_factory=dict)
    plans_dir: str
    store: str
    taken_at: str
    #: the bytes :func:`load_snapshot` read, and the kept objects by id (held in memory)
    _text: bytes | None = PrivateAttr(None)
    _held: dict[str, bytes] = PrivateAttr(default_factory=dict)

    def plan_scope(self) -> PlanScope:
        """Which project paths are the plan repo (never the step's changes)."""
        return PlanScope.of(self.project_dir, self.plans_dir)

    def git_roots(self) -> list[Path]:
        """The work trees whose objects hold the "before" bytes: the project's, its submodules'."""
        if self.git_root is None:
            return []
        return [Path(self.git_root), *(Path(self.project_dir) / base for base in self.submodules)]

    def held(self, oid: str) -> bytes | None:
        """The kept bytes of ``oid`` held in memory (see :func:`load_snapshot`)."""
        return self._held.get(oid)

    def persist(self, path: Path) -> None:
        """Put back on disk what :func:`load_snapshot` read from ``path`` and
        from the object store, where anything deleted or altered it since
        (never writing through a link; a store that cannot be written is
        left as it is)."""
        if self._text is None:
            return
        store = ObjectStore(Path(self.store))
        try:
            if _read(path) != self._text:
                real_dir(path.parent, write_anchor(Path(self.project_dir), path))
                replace_entry(path, self._text)
            for data in self._held.values():
                store.put(data)
        except (OSError, ValueError):
            pass


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
        for root, base in git.submodules(Path(snap.git_root), snap.prefix):
            snap.submodules[base], inside = git.status(root, "", base)
            dirty.update(inside)
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
    where = git.location_and_head(Path(snap.project_dir))
    if where is None:
        return None
    snap.mode, (snap.git_root, snap.prefix, snap.head) = "git", where
    snap.submodules = {
        base: git.head(root) for root, base in git.submodules(Path(snap.git_root), snap.prefix)
    }
    return snap


def save_snapshot(snap: Snapshot, path: Path) -> str:
    """Write ``snap`` to ``path`` (never through a link) and return its digest,
    for the checkpoint to keep and :func:`load_snapshot` to check."""
    text = model_json(snap).encode("utf-8")
    replace_entry(
        real_dir(path.parent, write_anchor(Path(snap.project_dir), path)) / path.name, text
    )
    return _digest(text)


def snapshot_digest(path: Path) -> str | None:
    """The digest of the snapshot written at ``path`` (None: none there)."""
    text = _read(path)
    return None if text is None else _digest(text)


def load_snapshot(path: Path, digest: str | None) -> Snapshot | None:
    """The snapshot at ``path`` with every byte it kept held in memory, so
    nothing done to the run store afterwards changes what it says.

    :param digest: what :func:`save_snapshot` returned (None: not checked).
    :return: None when there is none, or it is unreadable, or it is not the
        one ``digest`` names.
    """
    text = _read(path)
    if text is None or (digest is not None and _digest(text) != digest):
        return None
    try:
        snap = model_from_json(Snapshot, text)
    except ValueError:
        return None
    store = ObjectStore(Path(snap.store))
    snap._text = text
    for oid in {oid for oid in snap.files.values() if oid is not None}:
        data = store.get(oid)
        if data is not None:
            snap._held[oid] = data
    return snap


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _digest(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def _empty(project_dir: Path, plans_dir: Path | None) -> Snapshot:
    project = Path(project_dir).resolve()
    plans = Path(plans_dir).resolve() if plans_dir is not None else project / "plans"
    return Snapshot(
        project_dir=str(project),
        mode="files",
        plans_dir=str(plans),
        store=str(objects_dir(project)),
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
        if (
            stat.S_ISLNK(st.st_mode)
            or st.st_size > limit
            or self.kept + st.st_size > STORE_TOTAL_LIMIT
        ):
            return blob_id(path)
        data = read_bytes(path)
        if data is None:
            return None
        if b"\0" in data[:8192]:
            return data_id(data)
        return self.put(data)

    def put(self, data: bytes) -> str:
        """Keep ``data`` (unless already kept) and return its blob id; the
        store is never written through a link."""
        oid = data_id(data)
        if self.get(oid) is not None:
            return oid
        store = self.root.parent  # the run store
        try:
            store.mkdir(parents=True, exist_ok=True)
            replace_entry(real_dir(self._path(oid).parent, store) / oid[2:], data)
            self.kept += len(data)
        except (OSError, ValueError):
            pass  # an unwritable store only costs the "before" side of the diff
        return oid

    def get(self, oid: str) -> bytes | None:
        """The kept bytes of ``oid``, None when they were not kept (or are
        not those bytes any more)."""
        try:
            data = self._path(oid).read_bytes()
        except OSError:
            return None
        return data if data_id(data) == oid else None

    def _path(self, oid: str) -> Path:
        return self.root / oid[:2] / oid[2:]


class BeforeReader:
    """Bytes of a file as it was before: held in memory, else the object
    store, else git's objects (of the project's work tree or a submodule's)."""

    def __init__(self, before: Snapshot):
        self.before = before
        self.store = ObjectStore(Path(before.store))

    def read(self, oid: str | None) -> bytes | None:
        """The bytes of ``oid`` (None for None: the file did not exist)."""
        if oid is None:
            return None
        data = self.before.held(oid)
        if data is None:
            data = self.store.get(oid)
        for root in self.before.git_roots() if data is None else ():
            data = git.blob(root, oid)
            if data is not None:
                break
        return data
