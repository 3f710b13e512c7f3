"""Writing files so that a crash never leaves a half-written one, and the
``.stepkit/`` directory that holds what stepkit writes in a project."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
import time
from pathlib import Path


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8): a temp file in
    the same directory, fsync, rename.  Through a symlink the target is
    replaced; an existing file keeps its mode, a new one gets 0666 minus the
    umask, as a plain ``open`` would give it."""
    target = Path(path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def stepkit_dir(project_dir: Path) -> Path:
    """``<project>/.stepkit``, created with its own ``.gitignore`` (``*``) so
    nothing in it is ever committed."""
    root = Path(project_dir) / ".stepkit"
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    return root


def new_stamped_dir(parent: Path) -> Path:
    """A new directory under ``parent`` named by the time (sortable) plus a
    random suffix, e.g. ``20261130-141502-3f9a``."""
    parent.mkdir(parents=True, exist_ok=True)
    while True:
        path = parent / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
