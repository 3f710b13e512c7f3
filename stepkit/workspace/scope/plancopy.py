"""The plan repo: which paths it is, and a copy of it held in memory.

The plan repo is the plans dir, except when the plans dir is the project dir
or holds it (``--plans-dir .``, ``--plans-dir ..``): it is then only the
protocol's entries there (:data:`PLAN_ENTRIES`), and never a path inside the
project unless the plans dir is the project dir.  Otherwise every change the
coder makes, and stepkit's own run store, would be plan edits to undo.

A :class:`PlanCopy` holds the bytes of the plan repo's files in the stepkit
process's memory, out of reach of the coder it is taken before: nothing the
coder does to the run store can take the copy away.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from stepkit.workspace.scope.tree import data_id, shown_path

#: What the plan repo is when the plans dir holds the project (the step protocol's layout).
PLAN_ENTRIES = frozenset({"steps", "handoffs", "NOTES.md", "plan.md"})
PLAN_FILE_LIMIT = 5_000_000  # larger plan files are not held (and so never overwritten)
PLAN_COPY_LIMIT = 100_000_000  # bytes held per copy


@dataclass(frozen=True)
class PlanScope:
    """Which paths are the plan repo of a project (both paths resolved)."""

    project: Path
    root: Path

    @classmethod
    def of(cls, project_dir: Path | str, plans_dir: Path | str) -> PlanScope:
        """The plan repo at ``plans_dir`` of the project at ``project_dir``."""
        return cls(Path(project_dir).resolve(), Path(plans_dir).resolve())

    @property
    def holds_project(self) -> bool:
        """The plans dir is the project dir or a directory above it."""
        return self.project.is_relative_to(self.root)

    def covers(self, rel: str) -> bool:
        """Whether the project-relative path ``rel`` is in the plan repo."""
        if self.root == self.project:
            return rel.split("/", 1)[0] in PLAN_ENTRIES
        if self.holds_project or not self.root.is_relative_to(self.project):
            return False
        return rel.startswith(self.root.relative_to(self.project).as_posix() + "/")

    def anchor(self) -> Path:
        """The directory whose subtree a restore may change: the project when
        the plan repo is in it, else the directory holding the plans dir."""
        return self.project if self.root.is_relative_to(self.project) else self.root.parent

    def show(self, rel: str) -> str:
        """A plan-repo path as messages name it: project-relative when inside."""
        return shown_path(self.root / rel if rel else self.root, self.project)

    def walk(self) -> tuple[dict[str, os.stat_result], set[str]]:
        """(every entry that is not a directory, by its path relative to the
        plans dir, with its lstat; every directory): symlinks are entries,
        never followed; ``.git`` is never entered, nor the project when the
        plans dir is above it."""
        entries: dict[str, os.stat_result] = {}
        dirs: set[str] = set()
        if not _is_real_dir(self.root):
            return entries, dirs
        skip = self.project.relative_to(self.root).as_posix() if self.holds_project else None
        pending = [""]
        while pending:
            base = pending.pop()
            with os.scandir(self.root / base) as listing:
                for item in listing:
                    rel = f"{base}{item.name}"
                    if (
                        item.name == ".git"
                        or rel == skip
                        or (not base and self.holds_project and item.name not in PLAN_ENTRIES)
                    ):
                        continue
                    st = item.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        dirs.add(rel)
                        pending.append(rel + "/")
                    else:
                        entries[rel] = st
        return entries, dirs


@dataclass(frozen=True)
class PlanFile:
    """One regular file of the plan repo as it was."""

    id: str
    mode: int
    data: bytes | None  # None: too large to hold


@dataclass
class PlanCopy:
    """The plan repo at one moment: its files (bytes in memory), its
    symlinks (by link text) and its directories, paths relative to the
    plans dir."""

    scope: PlanScope
    files: dict[str, PlanFile] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)


def copy_plan_repo(project_dir: Path | str, plans_dir: Path | str) -> PlanCopy:
    """A copy of the plan repo as it is now, held in memory (take it right
    before a coder or a gate runs, to undo exactly what that one did)."""
    scope = PlanScope.of(project_dir, plans_dir)
    entries, dirs = scope.walk()
    copy = PlanCopy(scope, dirs=dirs)
    held = 0
    for rel, st in sorted(entries.items()):
        path = scope.root / rel
        try:
            if stat.S_ISLNK(st.st_mode):
                copy.links[rel] = os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                data = path.read_bytes()
                keep = len(data) <= PLAN_FILE_LIMIT and held + len(data) <= PLAN_COPY_LIMIT
                held += len(data) if keep else 0
                copy.files[rel] = PlanFile(
                    data_id(data), stat.S_IMODE(st.st_mode), data if keep else None
                )
        except OSError:
            continue  # gone or unreadable: not the plan repo's to restore
    return copy


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False
