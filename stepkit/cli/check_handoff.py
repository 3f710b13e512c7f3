"""``stepkit check-handoff PATH [--json]``: check any handoff file.

Exit 0 when valid, 1 with one problem per line, 2 when the file cannot be
read.  Outside a run there are no recorded gates: an Evidence section stepkit
rendered is checked against its digest and tells which gates did not pass
(no sentence may say they passed); a hand-written one is checked for shape.
Plugins from entry points add their own rules; the project's ``stepconf.py``
is not loaded (no project is named).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from stepkit.errors import StepkitError
from stepkit.shown import shown_json


def check_file(path: Path) -> list[str]:
    """Run every ``stepkit_check_handoff`` implementation on one file.

    :raises StepkitError: the file cannot be read.
    """
    from stepkit.pluginmanager import get_plugin_manager
    from stepkit.protocol.handoff.check import handoff_problems, read_handoff

    try:
        text = read_handoff(path)
    except OSError as exc:
        raise StepkitError(f"cannot read handoff {path}: {exc.strerror or exc}") from None
    return handoff_problems(get_plugin_manager(), path, text)


def run(args: argparse.Namespace) -> int:
    path = Path(args.path)
    problems = check_file(path)
    if args.json:
        print(
            shown_json(
                {"path": str(path), "ok": not problems, "problems": problems},
                indent=None,
                ensure_ascii=True,
            )
        )
    else:
        for problem in problems:
            print(problem)
        if not problems:
            print(f"{path}: valid handoff")
    return 1 if problems else 0
