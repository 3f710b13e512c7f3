"""One run at a time per project: the project lock.

Every command that works on the project (``run``, ``resume``, every
``stage``, ``verify``) holds an exclusive ``flock`` on the project's lock
file for as long as it works, through :func:`project_lock`.
The file lives outside the project (:func:`stepkit.workspace.store.lock_files`),
so a coder deleting the run store (``git clean -xfd``, ``rm -rf``) never
deletes a live lock.  The kernel owns that lock: it is
released when the holder exits however it exits (``kill -9`` included) and it
belongs to an open file, not to a pid, so a reused pid can never look like a
live holder.  That is why liveness is never judged from a pid here.

The holder record beside it names the holder (command, run id, step, pid) for the
message a second command prints.  It is written and read under a short
``flock`` of its own, taken before the run lock is tried, so a second command
never reads a record that the winner has not written yet (the run is named
in it as soon as it exists, :meth:`ProjectLock.name`), and a record is
only believed while the run lock is held (a dead holder's record is stale
and simply overwritten by the next holder).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from pydantic import ValidationError

from stepkit.errors import UsageError
from stepkit.models import Model
from stepkit.workspace import headstart
from stepkit.workspace.store import lock_files

#: The locks this process holds, by project dir: a process asking about its
#: own lock must not wait on its own flock (flock locks belong to open files,
#: so a second open in the same process would block against the first).
_HELD: dict[Path, ProjectLock] = {}


class Holder(Model):
    """Who holds a project's lock: the command, and the run and step it works on."""

    command: str
    pid: int
    run_id: str | None = None
    step: int | str | None = None

    def describe(self) -> str:
        """``run 20261201-101500-ab12 (step 2)`` or ``stepkit verify``."""
        what = f"run {self.run_id}" if self.run_id else f"stepkit {self.command}"
        return f"{what} (step {self.step})" if self.step not in (None, "", "next") else what


class ProjectBusy(UsageError):
    """Another command holds the project's lock (exit 2, nothing was started)."""

    def __init__(self, holder: Holder | None, lock_file: Path):
        if holder is None:
            message = f"another stepkit command holds {lock_file}; wait for it or stop it"
        else:
            message = (
                f"{holder.describe()} is live in this project (pid {holder.pid}); "
                "wait for it or stop it"
            )
        super().__init__(message)
        self.holder = holder


class ProjectLock:
    """The run lock of one project, held from :meth:`acquire` to :meth:`release`
    (or for a ``with`` block); commands take it with :func:`project_lock`."""

    def __init__(self, project_dir: Path):
        self.project_dir = Path(project_dir).resolve()
        self.lock_file, self.record_file = lock_files(self.project_dir)
        self._fd: int | None = None
        self._holder: Holder | None = None
        self._unnamed: int | None = None  # the holder record, locked until the run is named

    def acquire(self, command: str, *, step: int | str | None = None, naming: bool = False) -> None:
        """Take the lock for ``command`` at once, or fail; held until
        :meth:`release` (or the end of the ``with`` block).  With ``naming``,
        the holder record stays locked until :meth:`name` names the run, so a
        command that finds the project busy reads the record whole (the run's
        id, not "stepkit run").

        :raises ProjectBusy: another live command holds it.
        :raises UsageError: the lock's directory cannot be created or
            written, or the file system has no locks.
        """
        held = _HELD.get(self.project_dir)
        if held is not None:
            raise ProjectBusy(held._holder, self.lock_file)
        holder = Holder(command=command, pid=os.getpid(), step=step)
        record_fd = self._locked_record()
        try:
            # a verify's head start took the lock before anything else ran: it is this
            # command's (compared with None: with stdin closed, the lock's fd can be 0)
            taken_over = headstart.held_lock(self.lock_file)
            fd = taken_over if taken_over is not None else _try_flock(self.lock_file)
            if fd is None:
                raise ProjectBusy(_read(record_fd), self.lock_file)
            self._fd = fd
            _HELD[self.project_dir] = self
            self._write(record_fd, holder)
        finally:
            if naming and self._fd is not None:
                self._unnamed = record_fd
            else:
                os.close(record_fd)

    def name(self, *, run_id: str | None = None, step: int | str | None = None) -> None:
        """Name the run once it exists, and the step once the run resolved
        it, in the holder record."""
        if self._holder is None:
            return
        update = {k: v for k, v in (("run_id", run_id), ("step", step)) if v is not None}
        if self._unnamed is not None:  # still locked since acquire: write, then let readers in
            record_fd, self._unnamed = self._unnamed, None
            try:
                self._write(record_fd, self._holder.model_copy(update=update))
            finally:
                os.close(record_fd)
            return
        if all(getattr(self._holder, k) == v for k, v in update.items()):
            return
        with self._record() as record_fd:
            self._write(record_fd, self._holder.model_copy(update=update))

    def release(self) -> None:
        """Let the next command in (closing the file releases the flock)."""
        if self._unnamed is not None:
            os.close(self._unnamed)
            self._unnamed = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = self._holder = None
            _HELD.pop(self.project_dir, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @contextmanager
    def _record(self) -> Iterator[int]:
        fd = self._locked_record()
        try:
            yield fd
        finally:
            os.close(fd)

    def _locked_record(self) -> int:
        """The holder record, open and flocked (waiting for its writer)."""
        fd = _open(self.record_file, create_dir=True)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            os.close(fd)
            raise
        return fd

    def _write(self, record_fd: int, holder: Holder) -> None:
        os.ftruncate(record_fd, 0)
        os.pwrite(record_fd, holder.model_dump_json().encode("utf-8"), 0)
        self._holder = holder


def live_holder(project_dir: Path) -> Holder | None:
    """The command that holds ``project_dir``'s lock now; None when no live
    process holds it, whatever the record or a checkpoint says (or, held,
    when its record was damaged by hand and names no one)."""
    lock = ProjectLock(project_dir)
    held = _HELD.get(lock.project_dir)
    if held is not None:
        return held._holder
    if not lock.lock_file.is_file():
        return None
    with lock._record() as record_fd:
        fd = _try_flock(lock.lock_file)
        if fd is None:
            return _read(record_fd)
        os.close(fd)  # also releases the probe's own lock at once
    return None


def project_lock(
    project_dir: Path, command: str, *, step: int | str | None = None, naming: bool = False
) -> ProjectLock:
    """The one way a command takes a project's lock:
    ``with project_lock(project, command, step=...) as lock:`` holds it until
    the block ends (see :meth:`ProjectLock.acquire` for the errors and ``naming``)."""
    lock = ProjectLock(project_dir)
    lock.acquire(command, step=step, naming=naming)
    return lock


def _try_flock(path: Path) -> int | None:
    """An open file of ``path`` holding its exclusive flock; None when a live
    process holds it.

    :raises UsageError: it cannot be opened, or the file system has no locks."""
    fd = _open(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError as exc:
        os.close(fd)
        raise UsageError(f"cannot lock {path}: {_reason(exc)}") from None
    return fd


def _open(path: Path, *, create_dir: bool = False) -> int:
    try:
        if create_dir:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise UsageError(f"cannot open {path}: {_reason(exc)}") from None


def _read(record_fd: int) -> Holder | None:
    try:
        data: Any = json.loads(os.pread(record_fd, 65536, 0) or b"null")
        return Holder.model_validate(data) if data is not None else None
    except (OSError, ValueError, ValidationError):
        return None


def _reason(exc: OSError) -> str:
    """``Permission denied``, ``Read-only file system`` …: the errno's text."""
    return exc.strerror or str(exc)
