"""``stepkit resume [RUN_ID] [--answer TEXT] [--merge] [--project-dir DIR] [--json]``.

Continues a paused or interrupted run (default: the latest unfinished one)
from its checkpoint; ``--answer`` answers the question it paused at.  Output
and exit codes as ``stepkit run``.
"""

from __future__ import annotations

import argparse

from stepkit.cli import disabled_plugins
from stepkit.cli.run import displays, interrupted, report


def run(args: argparse.Namespace) -> int:
    from stepkit.api import RunInterrupted, resume_run

    try:
        with displays(args) as show:
            result = resume_run(
                run_id=args.run_id,
                answer=args.answer,
                project_dir=args.project_dir,
                merge=args.merge,
                disabled_plugins=disabled_plugins(args),
                observers_of=show,
            )
    except RunInterrupted as exc:
        return interrupted(exc)
    return report(result, args.json)
