"""Undoing edits to the plan repo from a :class:`PlanCopy`, and a gate's
edits to files it had no business changing (:func:`restore_files`), losing nothing.

Every entry the restore removes or overwrites is first moved into a keep
directory (``<keep_dir>/<its path>``, the path as messages show it), so a
hand edit made while a coder ran, or the coder's own version, is kept and
named.  Nothing is written through a link: a symlink the coder put in the
plan repo (in place of a file or of a directory, or of the plans dir
itself) is moved away as the link itself and a regular file is written in
its place, so a restore never writes outside the plan repo and its keep
directory.  When the keep directory cannot be made safely (a link on its
way from the project), nothing is restored and the changes are reported as
left as they are.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from stepkit.workspace.files import LinkInTheWay, real_dir, replace_entry
from stepkit.workspace.scope.plancopy import PlanCopy
from stepkit.workspace.scope.tree import blob_id, shown_path
from stepkit.workspace.store import write_anchor

NOT_HELD = "not restored: it was too large to hold a copy of"


def restore_plan_repo(before: PlanCopy, keep_dir: Path) -> list[str]:
    """Put the plan repo back as ``before`` holds it: changed and deleted
    files get their bytes back, added files and links are removed, each
    displaced entry kept under ``keep_dir`` (created only when something is
    kept; it must lie inside the project).

    :return: one line per undone change, naming the path and where what was
        there is kept (empty: untouched).
    """
    return _Restore(before, Path(keep_dir)).run()


class _Restore:
    def __init__(self, before: PlanCopy, keep_dir: Path):
        self.before, self.scope, self.keep_dir = before, before.scope, keep_dir
        self.lines: list[str] = []

    def run(self) -> list[str]:
        blocked = self._chain_blocker()
        entries, dirs = self.scope.walk()
        changes = self._changes(entries) if blocked is None else [("", "replaced")]
        if not changes:
            return []
        try:
            real_dir(self.keep_dir, write_anchor(self.scope.project, self.keep_dir))
        except (LinkInTheWay, ValueError) as exc:
            return [
                f"{self.scope.show(rel)} ({how}; left as it is: cannot keep a copy, {exc})"
                for rel, how in changes
            ]
        if blocked is not None:
            self._keep_chain(blocked)
            entries, dirs = {}, set()
        for rel in sorted(entries):
            self._undo_entry(rel, entries[rel])
        for rel in sorted(dirs - self.before.dirs, reverse=True):
            self._remove_empty(rel)
        for rel in sorted(self.before.files.keys() - entries.keys()):
            if self.before.files[rel].data is None:
                self.lines.append(f"{self.scope.show(rel)} (deleted; {NOT_HELD})")
            else:
                self._write(rel, "deleted; restored")
        for rel in sorted(self.before.links.keys() - entries.keys()):
            self._link(rel, "deleted; restored")
        return self.lines

    # -- what changed -----------------------------------------------------------

    def _chain_blocker(self) -> Path | None:
        """The first path from the anchor down to the plans dir that is no
        longer a real directory (a link put there, say), or None."""
        anchor = self.scope.anchor()
        current = anchor
        for part in self.scope.root.relative_to(anchor).parts:
            current = current / part
            try:
                mode = current.lstat().st_mode
            except FileNotFoundError:
                return None  # a missing plans dir is recreated as its files are written
            if not stat.S_ISDIR(mode):
                return current
        return None

    def _changes(self, entries: dict[str, os.stat_result]) -> list[tuple[str, str]]:
        """(path, how) of each entry not as it was: changed, added or deleted."""
        known = self.before.files.keys() | self.before.links.keys()
        changes = [
            (rel, "changed" if rel in known else "added")
            for rel, st in entries.items()
            if not self._is_as_before(rel, st)
        ]
        return sorted(changes + [(rel, "deleted") for rel in known - entries.keys()])

    def _is_as_before(self, rel: str, st: os.stat_result) -> bool:
        path = self.scope.root / rel
        if stat.S_ISLNK(st.st_mode):
            return self.before.links.get(rel) == _link_text(path)
        old = self.before.files.get(rel)
        return old is not None and stat.S_ISREG(st.st_mode) and blob_id(path) == old.id

    # -- undoing ------------------------------------------------------------------

    def _undo_entry(self, rel: str, st: os.stat_result) -> None:
        if self._is_as_before(rel, st):
            return
        path, old = self.scope.root / rel, self.before.files.get(rel)
        existed = old is not None or rel in self.before.links
        if old is not None and old.data is None:
            self.lines.append(f"{self.scope.show(rel)} (changed; {NOT_HELD})")
            return
        if stat.S_ISREG(st.st_mode) and existed:
            what, kept = "modified", f"the changed file kept at {self._keep(rel)}"
        elif stat.S_ISREG(st.st_mode) and rel not in self.before.dirs:
            self.lines.append(f"{self.scope.show(rel)} (added; removed, kept at {self._keep(rel)})")
            return
        else:
            link = stat.S_ISLNK(st.st_mode)
            kind = (
                f"a symlink to {_link_text(path)}"
                if link
                else "a file"
                if stat.S_ISREG(st.st_mode)
                else "a special file"
            )
            what = f"replaced by {kind}" if existed or rel in self.before.dirs else f"added, {kind}"
            kept = f"{'the link' if link else 'it'} removed, kept at {self._keep(rel)}"
        if old is not None:
            self._write(rel, f"{what}; restored; {kept}")
        elif existed:
            self._link(rel, f"{what}; restored; {kept}")
        else:
            self.lines.append(f"{self.scope.show(rel)} ({what}; {kept})")

    def _keep_chain(self, blocked: Path) -> None:
        """Move away what stands where the plans dir (or a directory above
        it) was, so the plan repo is rebuilt as a real directory."""
        rel = blocked.relative_to(self.scope.anchor()).as_posix()
        text = f"a symlink to {_link_text(blocked)}" if blocked.is_symlink() else "not a directory"
        kept = self._keep_path(rel)
        self.lines.append(
            f"{shown_path(blocked, self.scope.project)} (replaced by {text}; "
            f"removed, kept at {kept})"
        )

    def _keep(self, rel: str) -> str:
        """Move the plan-repo entry ``rel`` into the keep directory; the copy's path as shown."""
        return self._keep_path((self.scope.root / rel).relative_to(self.scope.anchor()).as_posix())

    def _keep_path(self, anchor_rel: str) -> str:
        return keep_entry(
            self.scope.anchor() / anchor_rel, self.keep_dir / anchor_rel, self.scope.project
        )

    def _remove_empty(self, rel: str) -> None:
        try:
            (self.scope.root / rel).rmdir()
        except OSError:
            pass  # not empty (a .git in it, say): left as it is

    def _write(self, rel: str, how: str) -> None:
        """Write back the held bytes of ``rel`` (the callers report a file too large to hold)."""
        old = self.before.files[rel]
        assert old.data is not None
        path = self.scope.root / rel
        real_dir(path.parent, self.scope.anchor())
        replace_entry(path, old.data, old.mode)
        self.lines.append(f"{self.scope.show(rel)} ({how})")

    def _link(self, rel: str, how: str) -> None:
        path = self.scope.root / rel
        real_dir(path.parent, self.scope.anchor())
        os.symlink(self.before.links[rel], path)
        self.lines.append(f"{self.scope.show(rel)} ({how})")


def restore_files(project: Path, before: Mapping[str, bytes | None], keep_dir: Path) -> list[str]:
    """Put project files back as ``before`` holds them (None: the file did
    not exist), each one there now first moved to ``keep_dir/<path>`` (a
    directory inside the project, created only when something is kept).

    :param before: project-relative path → its bytes before; a path whose
        bytes are missing from it is named as not restored.
    :return: one line per path, naming where its displaced version is kept.
    """
    project = Path(project)
    lines = []
    for rel in sorted(before):
        path, old = project / rel, before[rel]
        try:
            mode = (
                stat.S_IMODE(path.lstat().st_mode)
                if path.is_file() and not path.is_symlink()
                else None
            )
            kept = keep_entry(path, keep_dir / rel, project) if os.path.lexists(path) else None
            if old is not None:
                replace_entry(real_dir(path.parent, project) / path.name, old, mode)
        except (OSError, ValueError) as exc:
            lines.append(f"{rel} (left as it is: cannot restore it, {exc})")
            continue
        what = "restored" if old is not None else "removed: it did not exist before"
        lines.append(
            f"{rel} ({what}; the changed version kept at {kept})" if kept else f"{rel} ({what})"
        )
    return lines


def keep_entry(source: Path, target: Path, project: Path) -> str:
    """Move the entry ``source`` (a link as the link itself) to ``target``,
    whose directories are made below ``project`` (or the run store, where
    it lies outside the project) never through a link; return ``target`` as
    messages show it."""
    real_dir(target.parent, write_anchor(project, target.parent))
    # a rename moves a link as the link itself; across file systems
    # shutil.move recreates the link (or copies the tree, links as links)
    shutil.move(source, target)
    return shown_path(target, project)


def _link_text(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None
