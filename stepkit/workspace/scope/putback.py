"""Putting back what a gate had no business changing.

Before a gate the gate runner holds the bytes of the files it must not
change (:func:`hold_files`); after it, :func:`restore_lockfiles` and
:func:`restore_outside` put back those it changed, each changed version
first moved under a keep directory (:func:`numbered_dir`), and
:func:`refresh_listing` brings the runner's view of the tree up to date.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from stepkit.workspace.scope.restore import restore_files
from stepkit.workspace.scope.tree import Listing, blob_id, committed_bytes, read_bytes

#: the largest file, and the most bytes in all, held in memory before a
#: gate to put back after it (beyond: named as not restored)
HOLD_FILE_LIMIT = 16_000_000
HOLD_TOTAL_LIMIT = 256_000_000


def hold_files(project: Path, paths: Iterable[str]) -> dict[str, bytes | None]:
    """The bytes of each regular file (None: absent) small enough to hold;
    the others are left out."""
    held: dict[str, bytes | None] = {}
    total = 0
    for rel in paths:
        path = project / rel
        try:
            st = path.lstat()
        except OSError:
            held[rel] = None
            continue
        if (
            stat.S_ISREG(st.st_mode)
            and st.st_size <= HOLD_FILE_LIMIT
            and total + st.st_size <= HOLD_TOTAL_LIMIT
        ):
            data = read_bytes(path)
            if data is not None:
                held[rel] = data
                total += len(data)
    return held


def restore_lockfiles(
    project: Path, lockfiles: Iterable[str], held: dict[str, bytes | None], keep: Path
) -> dict[str, str]:
    """Put back each tracked lockfile the gate changed: path → what was done."""
    changed = {p: held[p] for p in lockfiles if p in held and _read(project / p) != held[p]}
    return _lines(restore_files(project, changed, keep), changed)


def restore_outside(
    project: Path, paths: list[str], before: Listing, held: dict[str, bytes | None], keep: Path
) -> dict[str, str]:
    """Put back the files the formatter changed outside the change set:
    path → what was done."""
    originals: dict[str, bytes | None] = {}
    lost: dict[str, str] = {}
    for rel in paths:
        oid = before.ids.get(rel)
        if oid is None:
            originals[rel] = None  # it did not exist
        elif rel in held:
            originals[rel] = held[rel]
        elif rel not in before.hashed and (data := committed_bytes(project, rel, oid)) is not None:
            originals[rel] = data
        else:
            lost[rel] = f"{rel} (changed; not restored: no copy of it from before the gate)"
    return {**_lines(restore_files(project, originals, keep), originals), **lost}


def refresh_listing(seen: Listing, project: Path, paths: Iterable[str]) -> None:
    """Bring a listing up to date with the files a restore rewrote."""
    for rel in paths:
        oid = blob_id(project / rel)
        if oid is None:
            seen.ids.pop(rel, None)
        else:
            seen.ids[rel] = oid


def numbered_dir(base: Path, name: str) -> Path:
    """``<base>/<name>-<n>`` with the first n not taken (made only when something is kept)."""
    n = 1
    while (base / f"{name}-{n}").exists():
        n += 1
    return base / f"{name}-{n}"


def _read(path: Path) -> bytes | None:
    return read_bytes(path) if path.is_file() and not path.is_symlink() else None


def _lines(lines: list[str], paths: Mapping[str, object]) -> dict[str, str]:
    """restore_files' lines (one per path, in sorted order) by path."""
    return dict(zip(sorted(paths), lines, strict=True))
