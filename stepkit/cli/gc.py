"""``stepkit gc [--older-than DAYS] [--keep N]``: prune finished runs' logs
(:mod:`stepkit.engine.retention`); never a paused, interrupted or live run's."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    """Prune, under the project's lock, and say what was freed."""
    from stepkit.config import load_config, resolve_project_dir
    from stepkit.engine.lock import project_lock
    from stepkit.engine.retention import prune_logs
    from stepkit.engine.runstore import RunStore

    project = resolve_project_dir(args.project_dir)
    logs = load_config(project).logs
    keep_days = logs.keep_days if args.older_than is None else args.older_than
    keep_runs = logs.keep_runs if args.keep is None else args.keep
    with project_lock(project, "gc"):
        pruned = prune_logs(RunStore(project), keep_days, keep_runs)
    for run_id in pruned.runs:
        print(f"pruned the logs of run {run_id}")
    print(
        f"{len(pruned.runs)} run(s) pruned, {pruned.freed / 1e6:.1f} MB freed, "
        f"{pruned.compressed} log(s) compressed; {len(pruned.skipped)} unfinished or "
        "unreadable run(s) left alone"
    )
    return 0
