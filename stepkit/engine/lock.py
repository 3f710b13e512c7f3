"""One run at a time per project: the lock ``<project>/.stepkit/lock``.

Every command that works on the project (``run``, ``resume``, every
``stage``, ``verify``) holds an exclusive ``flock`` on
``.stepkit/lock`` for as long as it works.  The kernel owns that lock: it is
released when the holder exits however it exits (``kill -9`` included) and it
belongs to an open file, not to a pid, so a reused pid can never look like a
live holder.  That is why liveness is never judged from a pid here.

``.stepkit/lock.json`` names the holder (command, run id, step, pid) for the
message a second command prints.  It is written and read under a short
``flock`` of its own, taken before the run lock is tried, so a second command
never reads a record that the winner has not written yet, and a record is
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

from pydantic import BaseModel, ValidationError

from stepkit.errors import UsageError
from stepkit.workspace.files import stepkit_dir

#: The locks this process holds, by project dir: a process asking about its
#: own lock must not wait on its own flock (flock locks belong to open files,
#: so a second open in the same process would block against the first).
_HELD: dict[Path, ProjectLock] = {}


class Holder(BaseModel):
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
            message = (f"{holder.describe()} is live in this project (pid {holder.pid}); "
                       "wait for it or stop it")
        super().__init__(message)
        self.holder = holder


class ProjectLock:
    """The run lock of one project, held from :meth:`acquire` to :meth:`release`
    (or for a ``with`` block)."""

    def __init__(self, project_dir: Path):
        self.project_dir = Path(project_dir).resolve()
        self.root = self.project_dir / ".stepkit"
        self.lock_file = self.root / "lock"
        self.record_file = self.root / "lock.json"
        self._fd: int | None = None
        self._holder: Holder | None = None

    def acquire(self, command: str, *, step: int | str | None = None) -> None:
        """Take the lock for ``command`` at once, or fail (see :meth:`taking`)."""
        with self.taking(command, step=step):
            pass

    @contextmanager
    def taking(self, command: str, *, step: int | str | None = None) -> Iterator[Holder]:
        """Take the lock for ``command`` at once, or fail.  The block may fill
        in the holder it gets (the run it creates or resumes): the record is
        written when the block ends, before any other command can read it.
        The lock stays held after the block, until :meth:`release`; if the
        block raises, it is released.

        :raises ProjectBusy: another live command holds it.
        :raises UsageError: ``.stepkit`` cannot be created or written (not a
            directory, a read-only project dir), or the file system has no locks.
        """
        held = _HELD.get(self.project_dir)
        if held is not None:
            raise ProjectBusy(held._holder, self.lock_file)
        _writable_root(self.project_dir)
        holder = Holder(command=command, pid=os.getpid(), step=step)
        with self._record() as record_fd:
            fd = _open(self.lock_file)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise ProjectBusy(_read(record_fd), self.lock_file) from None
            except OSError as exc:
                os.close(fd)
                raise UsageError(f"cannot lock {self.lock_file}: {_reason(exc)}") from None
            self._fd, self._holder = fd, holder
            _HELD[self.project_dir] = self
            try:
                yield holder
                self._write(record_fd, holder)
            except BaseException:
                self.release()
                raise

    def name_step(self, step: int | str | None) -> None:
        """Name the step in the holder record once the run has resolved it."""
        if self._holder is None or step is None or self._holder.step == step:
            return
        with self._record() as record_fd:
            self._write(record_fd, self._holder.model_copy(update={"step": step}))

    def release(self) -> None:
        """Let the next command in (closing the file releases the flock)."""
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
        fd = _open(self.record_file)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)

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
        fd = _open(lock.lock_file)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(record_fd)
        finally:
            os.close(fd)  # also releases the probe's own lock at once
    return None


def _writable_root(project_dir: Path) -> None:
    root = project_dir / ".stepkit"
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} is not a directory (stepkit keeps its runs and lock there); move it away")
    try:
        stepkit_dir(project_dir)
    except OSError as exc:
        raise UsageError(f"cannot write {root}: {_reason(exc)} (stepkit keeps its runs and lock there)") from None


def _open(path: Path) -> int:
    try:
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
