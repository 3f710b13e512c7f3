"""``stepkit merge-driver %O %A %B %P``: the plan repo's git merge driver
(:func:`stepkit.planrepo.mergedriver.merge_plan_file`), as git runs it;
``stepkit merge-driver --register`` registers it in the repository
(:func:`stepkit.planrepo.mergesetup.register_merge_driver`), as ``stepkit
init`` does, for a clone of a project whose plan exists already."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stepkit.errors import UsageError

_FILES = ("base", "ours", "theirs", "path")


def run(args: argparse.Namespace) -> int:
    """Merge: 0 when merged into OURS, 1 when conflicts are left in it.
    ``--register``: 0 when registered, 2 outside git."""
    given = [name for name in _FILES if getattr(args, name) is not None]
    if args.register:
        if given:
            raise UsageError("merge-driver: --register takes no files")
        return _register(args)
    if len(given) != len(_FILES):
        raise UsageError(
            "merge-driver: needs BASE OURS THEIRS PATH (git's %O %A %B %P), or --register"
        )
    from stepkit.planrepo.mergedriver import MergeDriverError, merge_plan_file

    try:
        left = merge_plan_file(Path(args.base), Path(args.ours), Path(args.theirs), args.path)
    except MergeDriverError as exc:
        print(f"stepkit: merge-driver: {exc}", file=sys.stderr)
        return 1
    return 1 if left else 0


def _register(args: argparse.Namespace) -> int:
    from stepkit.config import load_config, resolve_project_dir
    from stepkit.planrepo.mergesetup import DRIVER_NAME, register_merge_driver
    from stepkit.planrepo.model import resolve_plans_dir

    project = resolve_project_dir(args.project_dir)
    plans = resolve_plans_dir(project, args.plans_dir, load_config(project).plans_dir)
    try:
        attributes = register_merge_driver(project, plans)
    except OSError as exc:
        raise UsageError(f"cannot register the merge driver: {exc.strerror or exc}") from None
    if attributes is None:
        raise UsageError(
            f"{plans} is not inside a git work tree (git init first); nothing was registered"
        )
    print(f"Merge driver: {DRIVER_NAME} registered in the git config and {attributes}")
    return 0
