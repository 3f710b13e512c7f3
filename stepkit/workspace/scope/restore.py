"""Undoing the coder's edits to the plan repo, from a snapshot's byte copy of it."""

from __future__ import annotations

from pathlib import Path

from stepkit.workspace.files import atomic_write
from stepkit.workspace.scope.snapshot import BeforeReader, Snapshot
from stepkit.workspace.scope.tree import blob_id, walk_files


def restore_plan_repo(before: Snapshot, project_dir: Path, plans_dir: Path) -> list[str]:
    """Undo every change to the plan repo since ``before``: modified and
    deleted files get their saved bytes back, added files are removed.

    :return: one line per undone change, naming the file (empty: untouched).
    """
    project = Path(project_dir).resolve()
    plans = Path(plans_dir).resolve()
    reader = BeforeReader(before)
    undone = []
    for rel, old_id in sorted(before.plan_files.items()):
        path = plans / rel
        current = blob_id(path)
        if current == old_id:
            continue
        data = reader.read(old_id)
        shown = _display(path, project)
        if data is None:
            undone.append(f"{shown} (changed, but its saved copy is missing: left as it is)")
            continue
        atomic_write(path, data)
        undone.append(f"{shown} ({'deleted' if current is None else 'modified'}; restored)")
    for rel in walk_files(plans):
        if rel not in before.plan_files:
            (plans / rel).unlink()
            undone.append(f"{_display(plans / rel, project)} (added; removed)")
    return undone


def _display(path: Path, project: Path) -> str:
    try:
        return path.relative_to(project).as_posix()
    except ValueError:
        return str(path)
