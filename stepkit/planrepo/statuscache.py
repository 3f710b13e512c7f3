"""The status report of a whole plan repo, kept between runs of ``stepkit
status`` and keyed by the metadata of every file it was made from.

The key is a digest of the plan repo's path and, for each visible ``*.md``
file of ``steps/`` and ``handoffs/``, its name, size, modification and
change times and inode (the per-file parse cache's stamp,
:mod:`stepkit.planrepo.parsecache`).  When nothing changed, ``stepkit
status`` lists the two directories and reads one small file instead of
parsing and checking thousands.  A report is kept only when no file was
modified in the last :data:`~stepkit.planrepo.parsecache.RACY_S` seconds and
every file could be looked at, so what the cache gives is what loading gives.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from stepkit.planrepo.parsecache import RACY_S

#: a report of another version is never given (2: each step's ``incomplete``)
VERSION = 2


def repo_key(plans_dir: Path) -> tuple[str, bool] | None:
    """The digest of what the plan repo's report is made from, and whether a
    report made now may be kept (no file modified within the racy window);
    None when a file cannot be looked at (then nothing is cached)."""
    digest = hashlib.blake2b(
        f"{VERSION}\0{plans_dir}".encode("utf-8", "surrogateescape"), digest_size=20
    )
    newest = 0
    for sub in ("steps", "handoffs"):
        try:
            entries = sorted(os.scandir(plans_dir / sub), key=lambda e: e.name)
        except FileNotFoundError:
            digest.update(f"\0{sub}: none".encode())
            continue
        except OSError:
            return None
        digest.update(f"\0{sub}:".encode())
        for entry in entries:
            name = entry.name
            if name.startswith(".") or not name.lower().endswith(".md"):
                continue
            try:
                status = entry.stat()
            except OSError:
                return None  # a dangling symlink: loading reports it, the cache keeps nothing
            newest = max(newest, status.st_mtime_ns)
            digest.update(
                f"\0{name}\0{int(entry.is_file())}\0{status.st_size}\0{status.st_mtime_ns}"
                f"\0{status.st_ctime_ns}\0{status.st_ino}".encode("utf-8", "surrogateescape")
            )
    return digest.hexdigest(), time.time() - newest / 1e9 >= RACY_S


def cached_report(path: Path, key: str) -> dict[str, Any] | None:
    """The report kept in ``path`` under ``key``, or None."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and data.get("key") == key and isinstance(data.get("report"), dict):
        return data["report"]
    return None


def keep_report(path: Path, key: str, report: dict[str, Any]) -> None:
    """Keep ``report`` under ``key``; a cache that cannot be written is only a slower next run."""
    from stepkit.workspace.files import atomic_write

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"key": key, "report": report}, separators=(",", ":")))
    except OSError:
        pass
