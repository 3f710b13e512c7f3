"""Content snapshots of a project tree, to prove what a node did (not) change.

Used to check that a read-only node (orient) left the tree alone and by the
scope guard.  A snapshot maps each file's path (relative, ``/``-separated)
to the sha1 of its bytes; a symlink maps to the hash of its target text (it
is not followed).  Directories named in ``exclude`` are skipped at any
depth: VCS data, the run store, and dependency/build caches that merely
running a test command rewrites.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".git", ".hg", ".svn", ".stepkit", "node_modules", "target", ".venv", "venv",
    "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox",
    ".gradle", ".cache",
)


def tree_snapshot(project_dir: Path, exclude: tuple[str, ...] = DEFAULT_EXCLUDE) -> dict[str, str]:
    """Return ``{relative path: sha1}`` for every file under ``project_dir``.

    Unreadable files are recorded as ``"unreadable"`` so they still count
    as present.
    """
    root = Path(project_dir)
    skip = set(exclude)
    snapshot: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        base = Path(dirpath)
        for name in filenames:
            path = base / name
            snapshot[path.relative_to(root).as_posix()] = _file_hash(path)
        for name in dirnames:
            path = base / name
            if path.is_symlink():
                snapshot[path.relative_to(root).as_posix()] = _file_hash(path)
    return snapshot


def diff_snapshots(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Paths added, removed or changed between two snapshots, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def _file_hash(path: Path) -> str:
    digest = hashlib.sha1()
    try:
        if path.is_symlink():
            digest.update(b"symlink:" + os.fsencode(os.readlink(path)))
        else:
            with path.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
    except OSError:
        return "unreadable"
    return digest.hexdigest()
