"""Which git work trees stepkit made for ``stepkit run --worktree``, and for
what: a record in the linked work tree's admin directory
(``<git common dir>/worktrees/<id>/stepkit.json``).

The record lives in git's own directory, not in the work tree: the step's
commit never holds it, ``git clean`` never reaches it, and ``git worktree
remove`` deletes it with the work tree.  It is plain JSON read without
pydantic or a git process, so ``stepkit status`` and the gates' PATH (see
:mod:`stepkit.workspace.toolpath`) can ask it cheaply.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from stepkit.workspace.files import atomic_write
from stepkit.workspace.store import git_location

#: The record's file name in a linked work tree's admin directory.
RECORD_NAME = "stepkit.json"
#: The run setting that holds the run's :class:`WorktreeRecord` (its checkpoint keeps it).
SETTING = "worktree"
#: Every ``unprepared`` reason starts so (:mod:`stepkit.worktrees.prepare`).
UNPREPARED = "the work tree's dependencies are not prepared"
#: The outcome at which a ``--worktree`` run's step is committed on its branch.
COMMITS_AT = "STEP_COMPLETE"


@dataclass(frozen=True)
class WorktreeRecord:
    """One stepkit work tree.

    :ivar path: the work tree's root.
    :ivar project: the project dir inside it (``path`` plus the user's
        project's place in their repository).
    :ivar origin: the user's project dir the run was started from.
    :ivar origin_top: the root of the user's work tree.
    :ivar branch: ``stepkit/<NN>-<slug>``.
    :ivar base: the commit the branch was created from.
    :ivar step: the step number.
    :ivar plans: the plan repo, relative to ``project``.
    :ivar merge: merge the branch into the user's branch when the step completes.
    :ivar unprepared: why the work tree's dependencies could not be prepared
        (:mod:`stepkit.worktrees.prepare`), naming the fix; "" when they were.
    :ivar setup_log: the log of the ``[worktree] setup`` command ("" when none ran).
    """

    path: str
    project: str
    origin: str
    origin_top: str
    branch: str
    base: str
    step: int
    plans: str
    merge: bool = False
    unprepared: str = ""
    setup_log: str = ""

    def as_settings(self) -> dict[str, object]:
        """The record as the run's ``worktree`` setting (stored with its checkpoint)."""
        return asdict(self)

    @classmethod
    def from_mapping(cls, data: object) -> WorktreeRecord | None:
        """A record from its JSON form; None when it is not one."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})
        except TypeError:
            return None


def write_record(worktree: Path, record: WorktreeRecord) -> None:
    """Keep ``record`` in the admin directory of the linked work tree at ``worktree``."""
    admin = admin_dir(worktree)
    if admin is None:
        raise OSError(f"{worktree} is not a linked git work tree")
    atomic_write(admin / RECORD_NAME, json.dumps(asdict(record), indent=2))


def record_of(project_dir: Path) -> WorktreeRecord | None:
    """The record of the stepkit work tree holding ``project_dir``; None for
    any other directory (the user's own tree included)."""
    admin = admin_dir(Path(project_dir).resolve())
    return _read(admin / RECORD_NAME) if admin is not None else None


def records(common_dir: Path) -> list[WorktreeRecord]:
    """Every stepkit work tree git still has on record in ``common_dir``, by branch."""
    found = [_read(path) for path in sorted(Path(common_dir).glob(f"worktrees/*/{RECORD_NAME}"))]
    return sorted((r for r in found if r is not None), key=lambda r: r.branch)


def admin_dir(worktree: Path) -> Path | None:
    """``<git common dir>/worktrees/<id>`` of the linked work tree holding
    ``worktree``; None for a main work tree or outside git."""
    located = git_location(Path(worktree))
    if located is None or located[2] == "main":
        return None
    _, common, name = located
    return common / name


def _read(path: Path) -> WorktreeRecord | None:
    try:
        return WorktreeRecord.from_mapping(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
