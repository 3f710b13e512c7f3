"""``stepkit new TITLE``: the next step file from the template, numbered on
from the plan's last step, named after its title."""

from __future__ import annotations

import argparse

from stepkit.errors import UsageError


def run(args: argparse.Namespace) -> int:
    """Write the step file and say where it is and what to fill in."""
    from stepkit.config import load_config, resolve_project_dir
    from stepkit.planrepo.model import resolve_plans_dir
    from stepkit.planrepo.scaffold import new_step

    project = resolve_project_dir(args.project_dir)
    plans = resolve_plans_dir(project, args.plans_dir, load_config(project).plans_dir)
    path = new_step(plans, args.title, _numbers(args.depends_on))
    try:
        shown = path.relative_to(project)
    except ValueError:
        shown = path
    print(f"Wrote {shown}")
    print(
        "Fill in its Objective, Tasks (name each file) and Acceptance criteria, then: stepkit status"
    )
    return 0


def _numbers(text: str | None) -> list[int]:
    """``--depends-on 1,3`` as ``[1, 3]``."""
    if not text:
        return []
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not all(part.isdigit() for part in parts):
        raise UsageError(
            f"--depends-on {text!r}: expected step numbers separated by commas, e.g. 1,3"
        )
    return [int(part) for part in parts]
