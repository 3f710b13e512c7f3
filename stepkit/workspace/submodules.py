"""A git submodule the project declares but has not checked out.

A clone without ``--recurse-submodules`` (or an archive of a commit) leaves
each submodule an empty directory; a gate reading its files then fails for
want of them (tomlkit's tests collect ``tests/toml-test/…``).  That is the
checkout's set-up, not the code: a failing gate whose output names a path
under such a submodule is an environment fault naming the submodule and
``git submodule update --init``, so no fix attempt is spent on it.
"""

from __future__ import annotations

import re
from pathlib import Path

from stepkit.workspace.scope import git

#: What fixes it, said in the fault.
INIT = "git submodule update --init"


def missing_submodules(project_dir: Path) -> list[tuple[Path, str]]:
    """(absolute path, path as ``.gitmodules`` gives it) of each submodule the
    work tree's ``.gitmodules`` declares whose directory is absent or empty;
    none outside git or without ``.gitmodules``."""
    where = git.location(Path(project_dir))
    if where is None:
        return []
    top = Path(where[0])
    if not (top / ".gitmodules").is_file():
        return []
    out = git.run(
        ["config", "-z", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.path$"], top
    )
    missing = []
    for entry in (out or b"").split(b"\0"):
        rel = git.text(entry.partition(b"\n")[2]).strip().strip("/")
        directory = top / rel
        if rel and not (directory.is_dir() and any(directory.iterdir())):
            missing.append((directory, rel))
    return missing


def submodule_fault(project_dir: Path, output: str) -> str | None:
    """The environment fault of a failed gate whose ``output`` names a path
    under a submodule that is not checked out, as a one-line cause; None
    when there is no such submodule or the output names none of its paths."""
    project = Path(project_dir).resolve()
    for directory, declared in missing_submodules(project):
        forms = {str(directory), declared}
        if directory.is_relative_to(project):
            forms.add(directory.relative_to(project).as_posix())
        named = re.compile(
            r"(?<![\w.-])(?:"
            + "|".join(map(re.escape, sorted(forms, key=len, reverse=True)))
            # the submodule's directory itself, or a path under it
            + r")(?=/|[\s'\":,)\]]|$)",
            re.MULTILINE,
        )
        if named.search(output):
            return (
                f"the git submodule {declared} is not checked out, and the command needs "
                f"its files: run `{INIT}`"
            )
    return None
