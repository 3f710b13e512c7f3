"""Files git ignores: out of the step's changes, but not out of the gates' reach.

The scope guard sees the files git does not ignore.  A coder can hide a
file from it with an ignore rule that hides itself too (``tests/.gitignore``
listing ``.gitignore`` and ``conftest.py``), a rule added to a tracked
``.gitignore`` (that change shows; the file it hides does not), or by
writing inside a directory already ignored.  pytest, Python's import system
and most tools never read ignore rules: a hidden ``conftest.py`` or a hidden
``calc/`` package shadowing ``calc.py`` judges the step all the same.

:func:`look` takes the ignored entries (``git ls-files -o -i
--exclude-standard --directory``: a wholly ignored directory is one entry)
with their lstat signatures, which a write changes (``ctime`` cannot be set
back); :func:`changes` names the entries added or changed since an earlier
look, leaving out the caches, environments and build output tools make
everywhere (:data:`~stepkit.workspace.scope.tree.EXCLUDED_DIRS`, egg-info,
coverage data), whose changes are no sign of hiding.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from stepkit.workspace.scope import git
from stepkit.workspace.scope.tree import EXCLUDED_DIRS, changed_how
from stepkit.workspace.scope.watch import Signatures, signature

#: ignored names that tools write as a matter of course (beside EXCLUDED_DIRS): build
#: output, coverage data, logs.  A name a module is imported by (``calc/``) or a
#: tool's configuration (``conftest.py``) is never among them.
ROUTINE_SUFFIXES = (
    ".egg-info",
    ".pyc",
    ".pyo",
    ".coverage",
    ".log",
    ".tsbuildinfo",
    ".o",
    ".obj",
    ".d",
    ".a",
    ".lib",
    ".class",
    ".gcda",
    ".gcno",
    ".pdb",
)
ROUTINE_NAMES = frozenset(
    {
        "htmlcov",
        "coverage",
        ".coverage",
        "coverage.xml",
        ".nyc_output",
        ".eggs",
        ".DS_Store",
        "out",
        "lib",
        "tmp",
        ".turbo",
        ".nuxt",
        ".svelte-kit",
        ".parcel-cache",
        ".angular",
        ".dart_tool",
        "bin",
        "obj",
        "cmake-build-debug",
        "cmake-build-release",
        "_build",
        "zig-cache",
        "zig-out",
        ".stack-work",
    }
)

Look = Signatures


def look(project_dir: Path) -> Look | None:
    """``{ignored entry: lstat signature}`` now (a directory's entry ends in
    ``/``); None outside git."""
    project = Path(project_dir)
    out = git.run(["ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory"], project)
    if out is None:
        return None
    found: Look = {}
    for raw in out.split(b"\0"):
        if not raw:
            continue
        rel = git.text(raw)
        try:
            st = os.lstat(project / rel)
        except OSError:
            continue
        found[rel] = signature(st)  # what is under a collapsed directory is not walked
    return found


def changes(
    before: Look | None, now: Look | None, relevant: Callable[[str], bool] | None = None
) -> list[str]:
    """``<path> (added|changed)`` for each ignored entry that is new or
    changed in ``now``, routine ones left out (a deleted one hides nothing),
    and, given ``relevant``, those it does not hold relevant."""
    if before is None or now is None:
        return []
    named = []
    for rel, how in changed_how(before, now):
        if how == "deleted" or routine(rel) or (relevant is not None and not relevant(rel)):
            continue
        if how == "changed" and rel.endswith("/"):
            continue  # the same directory: a directory's entry changes with what it holds
        named.append(f"{rel} ({how})")
    return named


def routine(rel: str) -> bool:
    """A path in a cache, environment or build directory, or one tools write anyway."""
    return any(
        part in EXCLUDED_DIRS or part in ROUTINE_NAMES or part.endswith(ROUTINE_SUFFIXES)
        for part in rel.split("/")
        if part
    )
