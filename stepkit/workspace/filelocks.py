"""Which file locks processes wait for, and whether a process holds one.

A process stopped while it holds a lock (``flock``, ``fcntl`` record locks,
``lockf``) stops every process that waits for that lock: cargo holds
``$CARGO_HOME/.package-cache`` while it resolves a build, so a cargo stopped
there stalls every other cargo of the machine.  Linux lists the locks held
and the ones waited for in ``/proc/locks``, a waiter's line after ``->``,
each naming its file by device and inode::

    1: FLOCK  ADVISORY  WRITE 6278 fe:00:465 0 EOF
    1: -> FLOCK  ADVISORY  WRITE 6326 fe:00:465 0 EOF

The process a line names is the one that took the lock, which may be gone
(``exec 9>lock; flock 9; exec cmd``: the lock lives on with the open file)
or no process at all (``-1``, an open file description lock).  Who holds a
lock is read from the holder's side instead: ``/proc/PID/fdinfo/FD`` lists
the locks held through that open file, in the same form.
"""

from __future__ import annotations

import os
import re

_FILE = re.compile(r"[0-9a-f]+:[0-9a-f]+:[0-9]+")


def awaited_files(table: str | None = None) -> set[str]:
    """The files (``major:minor:inode``) some process waits to lock;
    ``table`` is the text of ``/proc/locks`` (None: read it; none where it
    cannot be read)."""
    if table is None:
        table = _read("/proc/locks")
    return {_file_of(line) for line in table.splitlines() if " -> " in line} - {""}


def holds_lock_on(pid: int, files: set[str]) -> bool:
    """``pid`` holds a lock on one of ``files`` through a file it has open."""
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return False
    for fd in fds:
        for line in _read(f"/proc/{pid}/fdinfo/{fd}").splitlines():
            if line.startswith("lock:") and _file_of(line) in files:
                return True
    return False


def _file_of(line: str) -> str:
    return next((field for field in line.split() if _FILE.fullmatch(field)), "")


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as text:
            return text.read()
    except OSError:
        return ""
