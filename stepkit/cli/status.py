"""``stepkit status``: the plan repo as a table, or as the JSON of DESIGN.md.

Needs no plugin and no model SDK, so it stays fast on large plan repos.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from stepkit.config import load_config, resolve_project_dir
from stepkit.planrepo.model import PlanRepo, resolve_plans_dir

_TITLE_WIDTH = 48


def run(args: argparse.Namespace) -> int:
    """Print the plan repo's steps and problems; 0 when it could be read."""
    resolve_project_dir(args.project_dir)  # a bad dir is one line; paths stay as the user gave them
    project_dir = Path(args.project_dir)
    config = load_config(project_dir)
    repo = PlanRepo.load(resolve_plans_dir(project_dir, args.plans_dir, config.plans_dir))
    if args.json:
        print(json.dumps(report(repo)))
    else:
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(errors="replace")
        print(render(repo))
    return 0


def report(repo: PlanRepo) -> dict[str, Any]:
    """The ``--json`` object of DESIGN.md ("--json of status")."""
    following = repo.next_step()
    steps = []
    for step in repo.steps:
        unsatisfied = repo.unsatisfied(step)
        handoff = repo.handoffs.get(step.number)
        steps.append({
            "step": step.number,
            "slug": step.slug,
            "title": step.title,
            "status": step.status,
            "path": str(step.path),
            "depends_on": step.depends_on,
            "deps_satisfied": not unsatisfied,
            "unsatisfied": unsatisfied,
            "handoff": str(handoff.path) if handoff else None,
            "handoff_result": handoff.result if handoff else None,
        })
    return {
        "plans_dir": str(repo.plans_dir),
        "next": following.number if following else None,
        "steps": steps,
        "problems": list(repo.problems),
    }


def render(repo: PlanRepo) -> str:
    """A plain-text table (no colour codes), the step ``next`` picks, the problems."""
    following = repo.next_step()
    arrow, ellipsis = _symbols()
    rows = [("", "STEP", "TITLE", "STATUS", "DEPS", "HANDOFF")]
    following_unmet: list[str] = []
    for step in repo.steps:
        handoff = repo.handoffs.get(step.number)
        unmet = repo.unsatisfied(step)
        if step is following:
            following_unmet = unmet
        deps = ", ".join(str(d) for d in step.depends_on) or "-"
        if unmet:
            deps += f" ({len(unmet)} unmet)"
        title = step.title
        if len(title) > _TITLE_WIDTH:
            title = title[: _TITLE_WIDTH - len(ellipsis)] + ellipsis
        result = (handoff.result or "no result") if handoff else "-"
        rows.append((arrow if step is following else "", str(step.number), title, step.status,
                     deps, result))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [f"Plan repo: {repo.plans_dir} ({len(repo.steps)} steps)", ""]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.append("")
    if following is None:
        lines.append("next: none (no in-progress or pending step)")
    else:
        lines.append(f"next: step {following.number} ({following.title})")
        lines += [f"  unmet: {reason}" for reason in following_unmet]
    if repo.problems:
        lines.append(f"\nProblems ({len(repo.problems)}):")
        lines += [f"  - {problem}" for problem in repo.problems]
    else:
        lines.append("No problems.")
    return "\n".join(lines)


def _symbols() -> tuple[str, str]:
    """The next-step marker and the ellipsis, in ASCII when stdout cannot encode them."""
    try:
        "→…".encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return ">", "..."
    return "→", "…"
