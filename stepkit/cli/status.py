"""``stepkit status``: the plan repo as a table, or as its ``--json`` object
(:func:`stepkit.planrepo.status.status_report`), and the project's paused runs
with their age (``paused_runs``, :func:`stepkit.engine.pause.paused_runs`),
and the steps in ``--worktree`` work trees and on unmerged ``stepkit/``
branches (:func:`stepkit.worktrees.listing.worktree_status`).

Needs no plugin and no model SDK, so it stays fast on large plan repos.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stepkit.configfile import plain_plans_dir, resolve_project_dir
from stepkit.engine.pause import last_runs, paused_runs
from stepkit.planrepo.model import PlanRepo, resolve_plans_dir
from stepkit.planrepo.quality import step_findings
from stepkit.planrepo.status import status_report
from stepkit.planrepo.stepstate import StepStates
from stepkit.shown import shown_json
from stepkit.workspace.store import cache_dir, store_dir, store_report
from stepkit.worktrees.listing import render_worktrees, worktree_status

_TITLE_WIDTH = 48


def run(args: argparse.Namespace) -> int:
    """Print the plan repo's steps and problems; 0 when it could be read."""
    resolve_project_dir(args.project_dir)  # a bad dir is one line; paths stay as the user gave them
    project_dir = Path(args.project_dir)
    configured = plain_plans_dir(project_dir)
    if configured is None:  # the table sets more than plans_dir: checked whole
        from stepkit.config import load_config

        configured = load_config(project_dir).plans_dir
    plans_dir = resolve_plans_dir(project_dir, args.plans_dir, configured)
    repo = PlanRepo.load(plans_dir, cache=_plans_cache(project_dir))
    runs = store_dir(project_dir) / "runs"
    paused, latest = paused_runs(runs), last_runs(runs)
    worktrees = worktree_status(project_dir, plans_dir)
    if args.json:
        print(
            shown_json(
                {
                    **status_report(repo, latest),
                    "paused_runs": paused,
                    **store_report(project_dir),
                    **worktrees,
                },
                indent=None,
                ensure_ascii=True,
            )
        )
    else:
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(errors="replace")
        print(render(repo, latest) + render_paused(paused) + render_worktrees(worktrees))
    return 0


def render_paused(paused: list[dict]) -> str:
    """The paused runs, one line each with its age and the command that resumes it ('' when none)."""
    if not paused:
        return ""
    lines = ["", f"Paused runs ({len(paused)}):"]
    lines += [
        f"  {run['run_id']}  step {run['step']}  at {run['node']}  paused {run['age']} ago"
        f"  (stepkit resume {run['run_id']})"
        for run in paused
    ]
    return "\n".join(lines)


def _plans_cache(project_dir: Path) -> Path | None:
    """The parse cache's file in the run store (None: the store cannot be made)."""
    try:
        return cache_dir(project_dir) / "plans.json"
    except OSError:
        return None


def render(repo: PlanRepo, runs: Mapping[int, Mapping[str, Any]] | None = None) -> str:
    """A plain-text table (no colour codes), the step ``next`` picks, the
    incomplete steps (:func:`~stepkit.planrepo.quality.step_findings`), the problems.
    STATE is where each step stands (:class:`~stepkit.planrepo.stepstate.StepStates`,
    with ``runs``, the latest run of each step)."""
    following = repo.next_step()
    states = StepStates(repo, runs)
    arrow, ellipsis = _symbols()
    rows = [("", "STEP", "TITLE", "STATUS", "STATE", "DEPS", "HANDOFF")]
    following_unmet: list[str] = []
    for step in repo.steps:
        handoff = repo.handoffs.get(step.number)
        unmet = states.unsatisfied(step)
        if step is following:
            following_unmet = unmet
        deps = ", ".join(str(d) for d in step.depends_on) or "-"
        if unmet:
            deps += f" ({len(unmet)} unmet)"
        title = step.title
        if len(title) > _TITLE_WIDTH:
            title = title[: _TITLE_WIDTH - len(ellipsis)] + ellipsis
        result = (handoff.result or "no result") if handoff else "-"
        rows.append(
            (
                arrow if step is following else "",
                str(step.number),
                title,
                step.status,
                states.of(step).state,
                deps,
                result,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [f"Plan repo: {repo.plans_dir} ({len(repo.steps)} steps)", ""]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.append("")
    if following is None:
        lines.append("next: none (no in-progress or pending step)")
    else:
        lines.append(f"next: step {following.number} ({following.title})")
        lines += [f"  unmet: {reason}" for reason in following_unmet]
    incomplete = [(step, found) for step in repo.steps if (found := step_findings(repo, step))]
    if incomplete:
        lines.append(
            f"\nIncomplete steps ({len(incomplete)}): stepkit run refuses each until it is "
            "filled in (--allow-incomplete-plan overrides)"
        )
        for step, found in incomplete:
            lines.append(f"  step {step.number} ({step.title}):")
            lines += [f"    - {finding}" for finding in found]
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
