"""What the step changed since its snapshot: the changed files, the diff, the tamper flags.

The plan repo is the harness's business: its files never count as changed
files, never enter the diff and are never flagged.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from stepkit.records import TamperFlag
from stepkit.workspace.scope import git
from stepkit.workspace.scope.plancopy import PlanScope
from stepkit.workspace.scope.snapshot import BeforeReader, Snapshot, head_snapshot
from stepkit.workspace.scope.tamper import file_flags
from stepkit.workspace.scope.tree import (
    EXCLUDED_DIRS,
    blob_id,
    is_excluded,
    read_bytes,
    text_of,
    walk_files,
)
from stepkit.workspace.scope.virtualenvs import Inside

DIFF_MAX_CHARS = 200_000
#: one changed file: (path, id before, id now, bytes before, bytes now)
_Change = tuple[str, str | None, str | None, bytes | None, bytes | None]
DIFF_FILE_MAX_CHARS = 40_000
_NOT_KEPT = "[content before the step was not kept; file changed]\n"


class StepChanges(NamedTuple):
    """What the step changed since its snapshot (fields named as the run
    state names them)."""

    #: project-relative paths (sorted) whose content differs: modified, added
    #: and deleted files, the plan repo excluded
    changed_files: list[str]
    #: unified diff (``a/`` before, ``b/`` now); binary or very large files are
    #: named, not diffed; each file's diff is cut at DIFF_FILE_MAX_CHARS and the
    #: whole at ``max_chars``, with a marker saying what was left out
    diff: str
    #: signs that verification was weakened, each naming its file: deleted test
    #: files, new skip/xfail/ignore markers, loosened lint or coverage
    #: configuration (lowered thresholds, new ignore/exclude entries, deleted configs)
    tamper_flags: list[TamperFlag]


def step_changes(
    before: Snapshot, project_dir: Path, max_chars: int = DIFF_MAX_CHARS
) -> StepChanges:
    """The changed files, the step diff and the tamper flags from one look at
    the tree: each changed file's before and now bytes are read once."""
    return _step_changes(list(_read_changes(before, Path(project_dir).resolve())), max_chars)


def stat_and_changes(before: Snapshot, project_dir: Path) -> tuple[list[FileStat], StepChanges]:
    """:func:`diff_stat` and :func:`step_changes` from one look at the tree
    (what the final approval shows: each walks it and reads every changed file)."""
    changes = list(_read_changes(before, Path(project_dir).resolve()))
    return _stats(changes), _step_changes(changes, DIFF_MAX_CHARS)


def _step_changes(changes: list[_Change], max_chars: int) -> StepChanges:
    parts: list[str] = []
    flags: list[TamperFlag] = []
    total, truncated = 0, False
    for index, (path, old_id, new_id, old, new) in enumerate(changes):
        flags.extend(file_flags(path, old_id, new_id, old, new))
        if truncated:
            continue
        piece = file_diff(path, old_id, new_id, old, new)
        if total + len(piece) > max_chars:
            parts.append(
                f"[... diff truncated: {len(changes) - index} more file(s) not shown ...]\n"
            )
            truncated = True
            continue
        parts.append(piece)
        total += len(piece)
    return StepChanges([change[0] for change in changes], "".join(parts), flags)


class FileStat(NamedTuple):
    """One changed file's line counts."""

    path: str
    #: lines added and removed; None for a binary or very large file, or one
    #: whose bytes before the step were not kept
    added: int | None
    removed: int | None
    #: ``modified``, ``added`` or ``deleted``
    change: str


def diff_stat(before: Snapshot, project_dir: Path) -> list[FileStat]:
    """The line counts of every file the step changed since ``before``, by path."""
    return _stats(_read_changes(before, Path(project_dir).resolve()))


def _stats(changes: Iterable[_Change]) -> list[FileStat]:
    stats = []
    for path, old_id, new_id, old, new in changes:
        change = "added" if old_id is None else "deleted" if new_id is None else "modified"
        text = file_diff(path, old_id, new_id, old, new, limit=None)
        lines = text.splitlines()
        if not lines or not lines[0].startswith("--- ") or lines[2:3] == [_NOT_KEPT.strip()]:
            stats.append(FileStat(path, None, None, change))
            continue
        body = lines[2:]  # past the --- and +++ headers
        added = sum(1 for line in body if line.startswith("+"))
        removed = sum(1 for line in body if line.startswith("-"))
        stats.append(FileStat(path, added, removed, change))
    return stats


def _read_changes(before: Snapshot, project: Path) -> Iterator[_Change]:
    """(path, id before, id now, bytes before, bytes now) of every changed
    file, sorted by path; each file read once."""
    reader = BeforeReader(before)
    for path, old_id, new_id in _changes(before, project):
        new = read_bytes(project / path) if new_id is not None else None
        yield path, old_id, new_id, reader.read(old_id), new


def working_tree_changes(project_dir: Path, plans_dir: Path) -> StepChanges:
    """The work tree's changes against HEAD, seen as a run sees a step's
    changes (plan repo left out, tamper flags raised); nothing outside git."""
    before = head_snapshot(project_dir, plans_dir)
    if before is None:
        return StepChanges([], "", [])
    return step_changes(before, project_dir)


def working_tree_files(project_dir: Path, plans_dir: Path) -> list[str] | None:
    """The files of the work tree's changes against HEAD that still exist
    (tracked and modified, or untracked and not ignored; plan repo and
    the run store left out), sorted; None outside git.  Without the diff:
    what a formatter is given outside a run."""
    before = head_snapshot(project_dir, plans_dir)
    if before is None:
        return None
    return [
        path for path, _old, new in _changes(before, Path(project_dir).resolve()) if new is not None
    ]


def project_files(project_dir: Path, plans_dir: Path) -> list[str] | None:
    """Every file of the project as ``pre-commit run --all-files`` sees it:
    the files in git's index that are files now (an untracked file, such as
    a build's output, is not the project's yet), virtualenvs and the plan
    repo left out, sorted; None outside git.  What a formatter is given by
    ``stepkit verify --all-files``."""
    project = Path(project_dir).resolve()
    out = git.run(["ls-files", "-z", "-c"], project)
    if out is None:
        return None
    plan, in_virtualenv = PlanScope.of(project, plans_dir), Inside(project)
    names = {git.text(name) for name in out.split(b"\0") if name}
    return sorted(
        rel
        for rel in names
        if (project / rel).is_file()
        and not (project / rel).is_symlink()
        and not plan.covers(rel)
        and not in_virtualenv(rel)
    )


def snapshot_changes(
    before: Snapshot, project_dir: Path
) -> list[tuple[str, str | None, str | None]]:
    """(path, blob id before, blob id now; None: absent) of every file the
    step changed since ``before``, sorted, the plan repo left out."""
    return _changes(before, Path(project_dir).resolve())


def _changes(before: Snapshot, project: Path) -> list[tuple[str, str | None, str | None]]:
    """(path, id before, id now) of every changed file, sorted by path."""
    plan = before.plan_scope()
    if before.mode == "git":
        old_ids = _git_before_ids(before, project)
        new_ids = {rel: blob_id(project / rel) for rel in old_ids}
    else:
        now = {rel: (project / rel).lstat() for rel in walk_files(project, EXCLUDED_DIRS)}
        old_ids = {rel: before.files.get(rel) for rel in set(now) | set(before.files)}
        new_ids = {}
        for rel in old_ids:
            st = now.get(rel)
            if st is None:
                new_ids[rel] = None
            elif before.stats.get(rel) == [st.st_size, st.st_mtime_ns]:
                new_ids[rel] = old_ids[rel]
            else:
                new_ids[rel] = blob_id(project / rel)
    return [
        (rel, old_ids[rel], new_ids[rel])
        for rel in sorted(old_ids)
        if old_ids[rel] != new_ids[rel] and not is_excluded(rel) and not plan.covers(rel)
    ]


def _git_before_ids(before: Snapshot, project: Path) -> dict[str, str | None]:
    """Ids before the step of every file that may have changed since, in the
    project's work tree and in each submodule."""
    ids = _work_tree_before_ids(Path(before.git_root or project), before.prefix, "", before.head)
    for base, head in before.submodules.items():
        ids.update(_work_tree_before_ids(project / base, "", base, head))
    return {**ids, **before.files}


def _work_tree_before_ids(
    root: Path, prefix: str, base: str, head_before: str | None
) -> dict[str, str | None]:
    """Ids in ``head_before`` of the paths of one work tree that git sees as
    changed now (the files dirty when the step started aside)."""
    head, dirty = git.status(root, prefix, base)
    if head == head_before:
        # a file clean when the step started was as HEAD has it
        return dirty
    # the coder committed: whatever the commits touched may have changed too
    candidates = set(dirty) | git.paths_between(root, head_before, head, prefix, base)
    tracked = git.commit_ids(root, head_before, prefix, base) if head_before else {}
    return {rel: tracked.get(rel) for rel in candidates}


def file_diff(
    path: str,
    old_id: str | None,
    new_id: str | None,
    old: bytes | None,
    new: bytes | None,
    limit: int | None = DIFF_FILE_MAX_CHARS,
) -> str:
    """The unified diff of one changed file (``old_id`` None: added, ``new_id``
    None: deleted), cut at ``limit`` characters (None: whole)."""
    if old_id is not None and old is None:
        return f"--- a/{path}\n+++ b/{path}\n{_NOT_KEPT}"
    old_text = text_of(old) if old is not None else ""
    new_text = text_of(new) if new is not None else ""
    if old_text is None or new_text is None:
        return f"Binary or large file changed: {path}\n"
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile="/dev/null" if old_id is None else f"a/{path}",
        tofile="/dev/null" if new_id is None else f"b/{path}",
    )
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"\n[... diff of {path} cut at {limit} characters ...]\n"
    return text
