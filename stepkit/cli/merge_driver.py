"""``stepkit merge-driver %O %A %B %P``: the plan repo's git merge driver
(:func:`stepkit.planrepo.mergedriver.merge_plan_file`), as git runs it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    """Write the merge into OURS: 0 when merged, 1 when conflicts are left in it."""
    from stepkit.planrepo.mergedriver import MergeDriverError, merge_plan_file

    try:
        left = merge_plan_file(Path(args.base), Path(args.ours), Path(args.theirs), args.path)
    except MergeDriverError as exc:
        print(f"stepkit: merge-driver: {exc}", file=sys.stderr)
        return 1
    return 1 if left else 0
