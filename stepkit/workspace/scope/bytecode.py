"""Python bytecode in the project, never trusted across what the coder ran.

Python runs ``<dir>/__pycache__/<name>.<tag>.pyc`` instead of compiling
``<dir>/<name>.py`` when the header of the former holds the source's size
and modification time, and a coder can write both: bytecode compiled from
a correct module, stamped with the broken source's size and time, makes the
tests pass on code the tree does not hold.  Caches are never among the
step's changes, so the scope guard does not see it.

:func:`look` takes the signatures of the bytecode files beside the
project's Python sources (every directory git lists a ``.py`` file in, or
outside git every directory but the environments and caches);
:func:`drop_changed` removes those added or changed since an earlier look.
Run after every node that ran the coder's code, it leaves only bytecode
that was there before, which the next import checks as usual, or none:
Python then compiles the source again, which is all a cache is for.

Within a node, the code under test can forge its own bytecode while the
tests run, for the judge's second run of a failing test (a flaky test
passes then).  So a node holds its look as the trusted one
(:func:`trusted`), and before every gate command in the project
:func:`drop_untrusted` removes what changed since.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from stepkit.workspace.scope import git
from stepkit.workspace.scope.tree import EXCLUDED_DIRS, walk_files
from stepkit.workspace.scope.watch import Signatures, signature

CACHE = "__pycache__"

Look = Signatures

#: the project and its bytecode as the running node found them (see :func:`trusted`)
_TRUSTED: ContextVar[tuple[Path, Look] | None] = ContextVar("trusted_bytecode", default=None)


@contextlib.contextmanager
def trusted(project_dir: Path, before: Look) -> Iterator[None]:
    """Hold ``before`` as the project's trusted bytecode while the block runs."""
    token = _TRUSTED.set((Path(project_dir).resolve(), before))
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def drop_untrusted(where: Path) -> list[str]:
    """Before a command: in the project, remove its bytecode that changed
    since the running node began (nothing when no node holds a look); in
    one of stepkit's scratch copies (the pristine copy, the start's), where
    no bytecode was ever looked at, remove all of it: the code under test
    may have forged it there for the judge's re-run."""
    place = Path(where).resolve()
    held = _TRUSTED.get()
    if held is not None and place == held[0]:
        return drop_changed(held[1], look(place))
    if _in_scratch(place):
        return drop_changed({}, look(place))
    return []


def _in_scratch(place: Path) -> bool:
    from stepkit.workspace.sandbox import scratch_home

    return place.is_relative_to(Path(scratch_home()).resolve())


def look(project_dir: Path) -> Look:
    """``{path: lstat signature}`` of the bytecode files beside the project's Python sources."""
    project = Path(project_dir)
    found: Look = {}
    for directory in _source_dirs(project):
        try:
            entries = list(os.scandir(project / directory / CACHE))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith((".pyc", ".pyo")):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[entry.path] = signature(st)
    return found


def drop_changed(before: Look, now: Look) -> list[str]:
    """Remove the bytecode files of ``now`` that are new or changed since
    ``before``; the paths removed."""
    dropped = []
    for path, now_signed in now.items():
        if before.get(path) != now_signed:
            try:
                os.unlink(path)
            except OSError:
                continue
            dropped.append(path)
    return dropped


def _source_dirs(project: Path) -> set[str]:
    """The directories (project-relative, ``""`` for its root) that hold a Python source."""
    listed = git.run(["ls-files", "-z", "-c", "-o", "--exclude-standard", "--", "*.py"], project)
    if listed is not None:
        names = [git.text(raw) for raw in listed.split(b"\0") if raw]
    else:
        names = [rel for rel in walk_files(project, EXCLUDED_DIRS) if rel.endswith(".py")]
    return {os.path.dirname(os.path.normpath(name)) for name in names}
