"""What each plan and handoff file parsed to, kept between runs of ``stepkit
status`` and keyed by the file's metadata (size, modification and change
times, inode), so a large plan repo is read from one file instead of
thousands.

A file is kept only when its frontmatter survives JSON unchanged (no
dates, no non-string keys) and it was not modified in the last
:data:`RACY_S` seconds (a write within the same timestamp tick could keep
the same metadata), so what the cache gives is what parsing gives.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

VERSION = 1
#: A file modified this recently is parsed again next time, never trusted from the cache.
RACY_S = 2.0

Parsed = tuple[dict[str, Any], str]


class ParseCache:
    """Parsed files by path; :meth:`save` writes it back when it changed."""

    def __init__(self, path: Path):
        self.path = path
        self._entries: dict[str, list] = {}
        self._changed = False
        self._now = time.time()
        try:
            data = json.loads(path.read_bytes())
            if (
                isinstance(data, dict)
                and data.get("version") == VERSION
                and isinstance(data.get("files"), dict)
            ):
                self._entries = data["files"]
        except (OSError, ValueError):
            pass
        self._seen: set[str] = set()

    def get(self, path: Path, status: os.stat_result) -> Parsed | None:
        """The parsed file when its metadata is unchanged, else None."""
        key = str(path)
        self._seen.add(key)
        entry = self._entries.get(key)
        if entry is not None and entry[0] == _stamp(status):
            return entry[1], entry[2]
        return None

    def put(self, path: Path, status: os.stat_result, parsed: Parsed) -> None:
        """Keep ``parsed`` for ``path`` (unless it would not come back the same)."""
        key = str(path)
        self._seen.add(key)
        if self._now - status.st_mtime < RACY_S:
            self._entries.pop(key, None)
            return
        try:
            metadata = json.loads(json.dumps(parsed[0]))
        except (TypeError, ValueError):
            return
        if metadata != parsed[0]:
            return
        self._entries[key] = [_stamp(status), metadata, parsed[1]]
        self._changed = True

    def save(self) -> None:
        """Write the cache back (files no longer seen are dropped); a cache
        that cannot be written is only a slower next run."""
        gone = set(self._entries) - self._seen
        if not (self._changed or gone):
            return
        for key in gone:
            del self._entries[key]
        from stepkit.workspace.files import atomic_write

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(
                self.path,
                json.dumps({"version": VERSION, "files": self._entries}, separators=(",", ":")),
            )
        except OSError:
            pass


def _stamp(status: os.stat_result) -> list[int]:
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]
