"""``stepkit undo [RUN_ID]``: the tree back as it was when the run's step
started (default: the project's latest run), the change kept under the run
as a patch (:mod:`stepkit.workspace.scope.undo`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from stepkit.errors import UsageError


def run(args: argparse.Namespace) -> int:
    """Undo, print what was put back and where the change is kept."""
    from stepkit.config import resolve_project_dir
    from stepkit.engine.lock import project_lock
    from stepkit.engine.runstore import UNFINISHED, RunStore
    from stepkit.workspace.scope import load_snapshot
    from stepkit.workspace.scope.undo import describe, undo_step
    from stepkit.worktrees.runs import run_project

    project = run_project(resolve_project_dir(args.project_dir), args.run_id)
    store = RunStore(project)
    with project_lock(project, "undo"):
        run_ids = [args.run_id] if args.run_id else store.run_ids()[-1:]
        if not run_ids:
            raise UsageError(
                f"no run in {store.runs}: nothing to undo (--project-dir names another project)"
            )
        run = store.open(run_ids[0])
        checkpoint = run.load()
        if checkpoint.status in UNFINISHED:
            raise UsageError(
                f"run {run.run_id} is {checkpoint.status}: end it first "
                f"(stepkit resume {run.run_id} --answer reject), then stepkit undo {run.run_id}"
            )
        before = load_snapshot(
            run.path / "scope_snapshot.json", checkpoint.state.get("scope_snapshot_digest")
        )
        if before is None:
            raise UsageError(
                f"run {run.run_id} kept no record of the tree its step started from "
                "(it ended before the coder ran, or the record was altered): nothing to undo"
            )
        try:
            undone = undo_step(before, project, _keep_dir(run.path))
        except OSError as exc:
            raise UsageError(f"cannot put the tree back: {exc}") from None
        run.event("undone", files=undone.files, patch=str(undone.patch or ""))
        run.close()
    print(f"Run {run.run_id} (step {checkpoint.state.get('step')}):")
    print("\n".join(describe(undone, project)))
    return 0


def _keep_dir(run_path: Path) -> Path:
    """``undo/`` of the run, or ``undo-2/``… when an earlier undo kept one."""
    keep, n = run_path / "undo", 1
    while keep.exists():
        n += 1
        keep = run_path / f"undo-{n}"
    return keep
