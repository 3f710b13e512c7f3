"""The project's files as they are now: walking them, their ids, the tree hash.

A file's id is its git blob id (sha1 of ``blob <size>\\0<bytes>``), so an id
git recorded and one computed from the bytes compare.  :func:`file_ids` and
:func:`tree_hash` are what the read-only checks and the gate runner's reuse
compare: equal hashes mean the gates would see byte-identical files.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from stepkit.workspace.scope import git
from stepkit.workspace.scope.virtualenvs import LAYOUT, is_virtualenv
from stepkit.workspace.store import STORE_NAME, in_store

#: Directories never walked outside git (caches, dependencies, build output).
EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        STORE_NAME,
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".gradle",
        ".idea",
        ".next",
        ".cache",
        "target",
        "build",
        "dist",
    }
)
#: Never the step's changes, even when git tracks or does not ignore them.
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", STORE_NAME})
TEXT_LIMIT = 1_000_000  # larger files are named, not read as text


class Listing(NamedTuple):
    """One look at the tree: every file's id, and which ids were hashed
    from the bytes (git holds no copy of those)."""

    #: ``{path: content id}``, as :func:`file_ids` has it
    ids: dict[str, str]
    #: the paths whose bytes differ from git's index or that git does not
    #: track (every file outside git)
    hashed: frozenset[str]
    #: the tree is a git work tree
    git: bool


def file_ids(project_dir: Path) -> dict[str, str]:
    """``{path: content id}`` of the tracked and untracked non-ignored files,
    those inside checked-out submodules too (all files outside git, minus
    :data:`EXCLUDED_DIRS`), the run store and caches left out.  Two maps
    compare equal when the files are byte-identical."""
    return listing(project_dir).ids


def listing(project_dir: Path) -> Listing:
    """:func:`file_ids` with what it learnt on the way (one git process per work tree)."""
    project = Path(project_dir).resolve()
    hashed: set[str] = set()
    ids = _git_ids(project, "", hashed)
    in_git = ids is not None
    if ids is None:
        ids = {rel: blob_id(project / rel) for rel in walk_files(project, EXCLUDED_DIRS)}
        hashed = set(ids)
    kept = {rel: i for rel, i in ids.items() if i is not None and not is_excluded(rel)}
    return Listing(kept, frozenset(hashed & kept.keys()), in_git)


def _git_ids(directory: Path, base: str, hashed: set[str]) -> dict[str, str | None] | None:
    """The ids of the files git knows in ``directory`` (paths under ``base``),
    recursing into the checked-out submodules; None outside git.  The paths
    whose id was hashed from the bytes are added to ``hashed``."""
    listed = git.index_ids(directory)
    if listed is None:
        return None
    ids: dict[str, str | None] = {base + rel: oid for rel, oid in listed.ids.items()}
    dirty = [base + rel for rel in listed.dirty if not is_excluded(base + rel)]
    ids.update((rel, blob_id(directory / rel[len(base) :])) for rel in dirty)
    hashed.update(dirty)
    for rel in listed.submodules:
        if (directory / rel / ".git").exists():
            ids.update(_git_ids(directory / rel, f"{base}{rel}/", hashed) or {})
    return ids


def committed_bytes(project_dir: Path, rel: str, oid: str) -> bytes | None:
    """The bytes of the blob ``oid`` that git's index held for ``rel``
    (looked up in the repository of the file's directory: a submodule's own)."""
    where = (Path(project_dir) / rel).parent
    while not where.is_dir() and where != Path(project_dir):
        where = where.parent
    return git.blob(where, oid)


def changed_between(before: Mapping[str, object], after: Mapping[str, object]) -> list[str]:
    """Paths added, removed or changed between two :func:`file_ids` maps (or
    any two maps of path to what identifies it), sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def changed_how(before: Mapping[str, object], after: Mapping[str, object]) -> list[tuple[str, str]]:
    """``(path, "added" | "deleted" | "changed")`` for each of :func:`changed_between`'s paths."""
    return [
        (p, "added" if p not in before else "deleted" if p not in after else "changed")
        for p in changed_between(before, after)
    ]


def tree_hash(project_dir: Path) -> str:
    """One hash of :func:`file_ids`: equal hashes mean the gates would see
    byte-identical files."""
    return hash_ids(file_ids(project_dir))


def hash_ids(ids: dict[str, str]) -> str:
    """The :func:`tree_hash` of a :func:`file_ids` map already taken."""
    digest = hashlib.sha256()
    for rel, blob in sorted(ids.items()):
        digest.update(f"{rel}\0{blob}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def walk_files(root: Path, excluded: frozenset[str] = frozenset({".git"})) -> list[str]:
    """Relative posix paths of the files (and symlinks) under ``root``,
    a virtualenv's own layout left out whatever its name, as git's listings
    leave it (:mod:`~stepkit.workspace.scope.virtualenvs`)."""
    if not root.is_dir():
        return []
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        env = base != root and is_virtualenv(base)
        dirnames[:] = sorted(d for d in dirnames if d not in excluded and not (env and d in LAYOUT))
        found.extend(
            (base / name).relative_to(root).as_posix()
            for name in filenames
            if not (env and name in LAYOUT)
        )
    return sorted(found)


def is_excluded(rel: str) -> bool:
    """Never the step's changes: the run store (outside git, or an earlier
    version's) and cache directories."""
    # in git mode too: a project without a .gitignore still has __pycache__ after its tests
    return in_store(rel) or not CACHE_DIRS.isdisjoint(rel.split("/")[:-1])


def shown_path(path: Path, project: Path) -> str:
    """A path as messages name it: project-relative inside the project, else absolute."""
    return path.relative_to(project).as_posix() if path.is_relative_to(project) else str(path)


def data_id(data: bytes) -> str:
    """The git blob id of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def blob_id(path: Path) -> str | None:
    """Git blob id of a file (of the link text for a symlink), None if absent."""
    try:
        if path.is_symlink():
            return data_id(os.readlink(path).encode("utf-8", "surrogateescape"))
        digest = hashlib.sha1()
        with path.open("rb") as fh:
            digest.update(b"blob %d\0" % os.fstat(fh.fileno()).st_size)
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return None


def read_bytes(path: Path) -> bytes | None:
    """A file's bytes (a symlink's link text), None if unreadable."""
    try:
        if path.is_symlink():
            return os.readlink(path).encode("utf-8", "surrogateescape")
        return path.read_bytes()
    except OSError:
        return None


def text_of(data: bytes | None) -> str | None:
    """Decoded text, or None for binary or too large content."""
    if data is None or len(data) > TEXT_LIMIT or b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")
