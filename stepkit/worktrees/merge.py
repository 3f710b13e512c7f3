"""``--merge``: the step's branch merged into the user's current branch, only
when that cannot go wrong.

The merge is computed first without touching anything
(``git merge-tree --write-tree``); it is made only when it is clean, the
user's HEAD is on a branch, no other stepkit command is live in their tree,
and their uncommitted changes (untracked files included) touch none of the
files the merge changes.  Otherwise the branch is left as it is and one
line says why.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.errors import UsageError
from stepkit.text import first_of
from stepkit.workspace.scope import git, users_tree
from stepkit.workspace.worktree_record import WorktreeRecord
from stepkit.worktrees.identity import commit_identity

#: How many paths a refusal names before it says "and N more".
SHOWN_PATHS = 3


def merge_branch(record: WorktreeRecord) -> tuple[bool, str]:
    """Merge ``record``'s branch into the user's current branch when it is
    safe; (merged, one line saying what happened or why not)."""
    from stepkit.engine.lock import project_lock

    top, branch = Path(record.origin_top), record.branch
    target = git.text(git.run(["symbolic-ref", "-q", "--short", "HEAD"], top) or b"").strip()
    if not target:
        return (
            False,
            f"not merged: your HEAD is detached (check out a branch, then git merge {branch})",
        )
    try:  # another stepkit merge waits first: the user's lock is then refused only by the user's command
        with users_tree.merging(Path(record.origin)), project_lock(Path(record.origin), "merge"):
            return _merge(top, branch, target)
    except UsageError as exc:
        return False, f"not merged: {exc}"
    except OSError as exc:
        return False, f"not merged: cannot lock the repository for the merge: {exc.strerror or exc}"


def _merge(top: Path, branch: str, target: str) -> tuple[bool, str]:
    code, out, err = git.call(
        ["merge-tree", "--write-tree", "--name-only", "--no-messages", "HEAD", branch], top
    )
    lines = git.text(out).splitlines()
    if code == 1:
        return False, f"not merged: merging {branch} into {target} conflicts in {_names(lines[1:])}"
    if code != 0 or not lines:
        return False, f"not merged: git merge-tree failed: {git.last_error(err, 'no reason given')}"
    changed = git.run(["diff", "--name-only", "-z", "--no-renames", "HEAD", lines[0]], top) or b""
    touched = {git.text(name) for name in changed.split(b"\0") if name}
    _, dirty = git.status(top, "")
    overlap = sorted(touched & set(dirty))
    if overlap:
        return False, (
            f"not merged: your uncommitted changes touch {_names(overlap)}, which the merge "
            f"changes (commit or stash them, then git merge {branch})"
        )
    before = users_tree.look(top)
    code, _, err = git.call(["merge", "--no-edit", "-q", branch], top, env=commit_identity(top))
    if code != 0:
        return (
            False,
            f"not merged: git merge {branch} failed: {git.last_error(err, 'no reason given')}",
        )
    after = users_tree.look(top)
    if _only_the_merge(top, before, after, touched):  # a run going on beside must not flag it
        users_tree.record_own_change(top, before, after)
    return True, f"merged {branch} into {target}"


def _only_the_merge(
    top: Path, before: users_tree.Look, after: users_tree.Look, touched: set[str]
) -> bool:
    """Whether the merge made all the change between ``before`` and
    ``after``: only the files it changes differ, each now as HEAD holds it
    (what another process wrote meanwhile is not stepkit's to vouch for)."""
    changed = {path for path, _ in users_tree.differences(before, after)} - {
        users_tree.INDEX,
        users_tree.HEAD,
    }
    if not changed <= touched:
        return False
    held = git.commit_ids(top, "HEAD", "") if changed else {}
    return all(after.files.get(path) == held.get(path) for path in changed)


def _names(paths: list[str]) -> str:
    return first_of(paths, SHOWN_PATHS) or "its files"
