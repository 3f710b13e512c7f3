"""Scope guard: what a step changed, undoing plan-repo edits, tamper flags.

One module per job:

- :mod:`~stepkit.workspace.scope.git`: the one place stepkit runs git;
- :mod:`~stepkit.workspace.scope.tree`: the files as they are now (walking,
  blob ids, :func:`file_ids`, :func:`tree_hash`);
- :mod:`~stepkit.workspace.scope.snapshot`: the tree when the step started
  (:class:`Snapshot`), the object store of its bytes, and persisting it
  (:func:`save_snapshot`, :func:`load_snapshot`);
- :mod:`~stepkit.workspace.scope.plancopy`: which paths are the plan repo
  (:class:`PlanScope`) and a copy of it in memory (:func:`copy_plan_repo`);
- :mod:`~stepkit.workspace.scope.diff`: :func:`step_changes` (changed files,
  diff and tamper flags in one look) and :func:`working_tree_changes` (the
  same view of the work tree against HEAD, outside a run);
- :mod:`~stepkit.workspace.scope.tamper`: the tamper flags of one file;
- :mod:`~stepkit.workspace.scope.gitguard`: :func:`git_internals` and
  :func:`undo_git_changes`, the hooks and command-running git config a
  coder round planted, flagged and undone;
- :mod:`~stepkit.workspace.scope.restore`: :func:`restore_plan_repo`;
- :mod:`~stepkit.workspace.scope.putback`: what a gate had no business
  changing held before it and put back after it (the gate runner's);
- :mod:`~stepkit.workspace.scope.watch`: :class:`StoreWatch`, what touched
  the run store while a coder ran.
- :mod:`~stepkit.workspace.scope.users_tree`: a look at the user's own tree
  (files, index, HEAD) and what changed there, for ``--worktree`` runs.

The plan repo is the harness's business: its files never count as changed
files, never enter the diff and are never flagged; edits the coder (or a
gate) makes there are undone by :func:`restore_plan_repo`, which keeps a
copy of everything it removes or overwrites.  The names below are the
package's public API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stepkit.workspace.scope.diff import StepChanges, step_changes, working_tree_changes
    from stepkit.workspace.scope.gitguard import GitInternals, git_internals, undo_git_changes
    from stepkit.workspace.scope.plancopy import PlanCopy, PlanScope, copy_plan_repo
    from stepkit.workspace.scope.restore import restore_plan_repo
    from stepkit.workspace.scope.snapshot import (
        Snapshot,
        load_snapshot,
        save_snapshot,
        snapshot_digest,
        take_snapshot,
    )
    from stepkit.workspace.scope.tree import (
        EXCLUDED_DIRS,
        changed_between,
        file_ids,
        hash_ids,
        shown_path,
        tree_hash,
        walk_files,
    )
    from stepkit.workspace.scope.watch import StoreWatch, run_store_paths, store_flag

#: Where each public name lives.  They are imported when first used, so that
#: importing one submodule (``stepkit status`` reads git through
#: :mod:`~stepkit.workspace.scope.git`) loads none of the others (the
#: snapshot's pydantic model among them).
_HOMES = {
    "StepChanges": "diff",
    "step_changes": "diff",
    "working_tree_changes": "diff",
    "GitInternals": "gitguard",
    "git_internals": "gitguard",
    "undo_git_changes": "gitguard",
    "PlanCopy": "plancopy",
    "PlanScope": "plancopy",
    "copy_plan_repo": "plancopy",
    "restore_plan_repo": "restore",
    "Snapshot": "snapshot",
    "load_snapshot": "snapshot",
    "save_snapshot": "snapshot",
    "snapshot_digest": "snapshot",
    "take_snapshot": "snapshot",
    "EXCLUDED_DIRS": "tree",
    "changed_between": "tree",
    "file_ids": "tree",
    "hash_ids": "tree",
    "shown_path": "tree",
    "tree_hash": "tree",
    "walk_files": "tree",
    "StoreWatch": "watch",
    "run_store_paths": "watch",
    "store_flag": "watch",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "EXCLUDED_DIRS",
    "GitInternals",
    "PlanCopy",
    "PlanScope",
    "Snapshot",
    "StepChanges",
    "StoreWatch",
    "changed_between",
    "copy_plan_repo",
    "file_ids",
    "git_internals",
    "hash_ids",
    "load_snapshot",
    "restore_plan_repo",
    "run_store_paths",
    "save_snapshot",
    "shown_path",
    "snapshot_digest",
    "step_changes",
    "store_flag",
    "take_snapshot",
    "tree_hash",
    "undo_git_changes",
    "walk_files",
    "working_tree_changes",
]
