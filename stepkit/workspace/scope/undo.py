"""Put the tree back as it was when a step started, keeping what is undone.

``stepkit undo`` after a failed or rejected step: every file the step's
snapshot (:mod:`~stepkit.workspace.scope.snapshot`) says changed since goes
back to its bytes then (or away, if it did not exist), and the files as they
are now are kept first, beside a patch of the whole change, so nothing is
lost.  The plan repo is left as it is, as it is in every view of a step's
changes.  Everything is checked before anything is written: a file whose
bytes before the step were not kept, or commits made since the step started,
stop the undo with nothing changed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from stepkit.errors import UsageError
from stepkit.workspace.files import real_dir, replace_entry
from stepkit.workspace.scope import git
from stepkit.workspace.scope.diff import file_diff, snapshot_changes
from stepkit.workspace.scope.snapshot import BeforeReader, Snapshot
from stepkit.workspace.scope.tree import read_bytes


@dataclass(frozen=True)
class Undone:
    """What :func:`undo_step` did."""

    #: project-relative paths put back (sorted)
    files: list[str]
    #: the patch of the undone change (None: there was nothing to undo)
    patch: Path | None
    #: a copy of every undone file as it was, under ``keep``/files/
    kept: Path | None


def undo_step(before: Snapshot, project_dir: Path, keep: Path) -> Undone:
    """Put ``project_dir`` back as ``before`` has it; keep the change under ``keep``.

    :param keep: a directory of the run: ``change.patch`` (the unified diff
        from the step's start to now, whole) and ``files/`` (every changed
        file as it is now, binary ones included) are written there first.
    :raises UsageError: HEAD moved since the step started, or the bytes of a
        file before the step were not kept; nothing is changed then.
    """
    project = Path(project_dir).resolve()
    if before.mode == "git" and before.git_root is not None:
        head = git.head(Path(before.git_root))
        if head != before.head:
            raise UsageError(
                f"HEAD moved since the step started ({(before.head or 'none')[:12]} → "
                f"{(head or 'none')[:12]}); undo puts files back, not commits: "
                f"`git reset --soft {before.head}` first, then stepkit undo (nothing was changed)"
            )
    reader = BeforeReader(before)
    changes = snapshot_changes(before, project)
    olds: dict[str, bytes | None] = {}
    for path, old_id, _new_id in changes:
        olds[path] = reader.read(old_id)
        if old_id is not None and olds[path] is None:
            raise UsageError(
                f"{path}: its content before the step was not kept (binary or too large), "
                "so it cannot be put back; nothing was changed"
            )
    if not changes:
        return Undone([], None, None)
    keep.mkdir(parents=True, exist_ok=True)
    patch = keep / "change.patch"
    kept = keep / "files"
    pieces = []
    for path, old_id, new_id in changes:
        new = read_bytes(project / path) if new_id is not None else None
        pieces.append(file_diff(path, old_id, new_id, olds[path], new, limit=None))
        if new is not None:
            replace_entry(real_dir((kept / path).parent, keep) / Path(path).name, new)
    replace_entry(patch, "".join(pieces).encode("utf-8"))
    for path, old_id, _new_id in changes:
        _put_back(project, path, olds[path] if old_id is not None else None)
    return Undone([path for path, _old, _new in changes], patch, kept)


def _put_back(project: Path, path: str, data: bytes | None) -> None:
    """``path`` holding ``data`` again (None: removed), keeping a file's mode."""
    target = project / path
    try:
        mode: int | None = stat.S_IMODE(target.lstat().st_mode)
    except FileNotFoundError:
        mode = None
    if data is None:
        if mode is not None:
            target.unlink()
        return
    if target.is_dir() and not target.is_symlink():
        raise UsageError(f"{path}: a directory stands where the step's file was; remove it first")
    replace_entry(real_dir(target.parent, project) / target.name, data, mode)


def describe(undone: Undone, project_dir: Path) -> list[str]:
    """The lines ``stepkit undo`` prints."""
    if not undone.files:
        return ["Nothing to undo: the tree is as it was when the step started."]
    lines = [f"Put back as at the step's start ({len(undone.files)} file(s)):"]
    lines += [f"  {path}" for path in undone.files]
    lines += [
        f"The change is kept: {_shown(undone.patch, project_dir)}",
        f"  (and each file as it was, under {_shown(undone.kept, project_dir)}{os.sep})",
        f"Apply it again with: git apply {_shown(undone.patch, project_dir)}",
    ]
    return lines


def _shown(path: Path | None, project_dir: Path) -> str:
    if path is None:
        return ""
    try:
        return str(path.relative_to(Path(project_dir).resolve()))
    except ValueError:
        return str(path)
