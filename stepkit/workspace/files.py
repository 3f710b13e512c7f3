"""Writing files so that a crash never leaves a half-written one, and the
directory outside every project that stepkit keeps its own state in."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path


def atomic_write(path: Path, data: bytes | str, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8): a temp file in
    the same directory, fsync, rename.  Through a symlink the target is
    replaced; an existing file keeps its mode, a new one gets 0666 minus the
    umask, as a plain ``open`` would give it.  The temp file is named after
    the writer's pid, so the temp file of a writer killed mid-write is
    removed by the next write of the same file.

    The rename is what makes the write whole or absent to every reader,
    however the writer is killed; the fsync only makes it survive a power
    loss or a kernel crash.  ``durable=False`` leaves it out, for a record
    rewritten as a process goes on, whose loss with the machine costs
    nothing the next record would not give back."""
    target = Path(path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    _replace(target, data, mode, durable)


def replace_entry(path: Path, data: bytes, mode: int | None = None) -> None:
    """Put a regular file holding ``data`` at ``path`` (temp file, fsync,
    rename), never writing through a link: a symlink at ``path`` is replaced
    itself, its target is left alone.  The parent must be a real directory
    (see :func:`real_dir`).  ``mode`` None: 0666 minus the umask."""
    _replace(Path(path), data, mode)


def _replace(target: Path, data: bytes | str, mode: int | None, durable: bool = True) -> None:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    import tempfile  # here: a head start reads state_home() before anything is imported

    _remove_killed_writers_temps(target)
    fd, tmp = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp"
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def sync(path: Path) -> None:
    """Flush ``path``, written with ``durable=False``, to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class LinkInTheWay(OSError):
    """A symlink or a non-directory where a directory was to be."""


def real_dir(path: Path, anchor: Path) -> Path:
    """Make sure ``path`` is a real directory below ``anchor`` (created as
    needed, one level at a time, never through a link), so that what is
    written in it lands under ``anchor``.

    :raises LinkInTheWay: a component below ``anchor`` is a symlink or not a
        directory (nothing is created below it).
    :raises ValueError: ``path`` is not below ``anchor``.
    """
    current = Path(anchor)
    for part in Path(path).relative_to(anchor).parts:
        current = current / part
        try:
            mode = current.lstat().st_mode
        except FileNotFoundError:
            current.mkdir()
            continue
        if not stat.S_ISDIR(mode):
            what = "a symlink" if stat.S_ISLNK(mode) else "not a directory"
            raise LinkInTheWay(f"{current} is {what}")
    return current


def _remove_killed_writers_temps(target: Path) -> None:
    """Remove ``.<name>.<pid>-….tmp`` beside ``target`` whose writer is gone."""
    prefix = f".{target.name}."
    try:
        names = [
            n for n in os.listdir(target.parent) if n.startswith(prefix) and n.endswith(".tmp")
        ]
    except OSError:
        return
    for name in names:
        pid = name[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and not pid_running(int(pid)):
            with contextlib.suppress(OSError):
                os.unlink(target.parent / name)


def pid_running(pid: int) -> bool:
    """True while a process ``pid`` exists (a zombie counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's: running
    return True


def state_home() -> Path:
    """``$XDG_STATE_HOME/stepkit`` (default ``~/.local/state/stepkit``): the one
    place outside projects stepkit writes to."""
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    return root / "stepkit"


def new_stamped_dir(parent: Path) -> Path:
    """A new directory under ``parent`` named by the time (sortable) plus a
    random suffix, e.g. ``20261130-141502-3f9a``."""
    parent.mkdir(parents=True, exist_ok=True)
    while True:
        # what secrets.token_hex(2) returns, without importing secrets (random, base64)
        # on the way to a verify's first gate
        path = parent / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.urandom(2).hex()}"
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
