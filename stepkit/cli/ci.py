"""``stepkit ci``: write the GitHub Actions workflow that runs the plan's
ready steps as jobs (:func:`stepkit.ciworkflow.github_workflow`), at the
repository's root; refuses to write over one that exists (2) unless
``--force``, a plan with no ready step (2), and a stepkit source the jobs
could not install from (2, :mod:`stepkit.cisource`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from stepkit.errors import UsageError


def run(args: argparse.Namespace) -> int:
    from stepkit import __version__
    from stepkit.cisource import stepkit_source
    from stepkit.ciworkflow import WORKFLOW_PATH, github_workflow
    from stepkit.config import load_config, resolve_project_dir
    from stepkit.engine.pause import last_runs
    from stepkit.planrepo.model import PlanRepo, resolve_plans_dir
    from stepkit.planrepo.stepstate import StepStates
    from stepkit.planrepo.validation import valid_plan
    from stepkit.workspace.files import atomic_write
    from stepkit.workspace.scope import git
    from stepkit.workspace.store import runs_dir

    project = resolve_project_dir(args.project_dir)
    plans = resolve_plans_dir(project, args.plans_dir, load_config(project).plans_dir)
    repo = valid_plan(plans) or PlanRepo.load(plans)  # no plan repo: load says so
    located = git.location(project)
    if located is None:
        raise UsageError(
            f"{project} is not in a git repository; the workflow runs steps in git "
            "worktrees: git init and commit first, or pass --project-dir (nothing was written)"
        )
    root = Path(located[0])
    workflow = root / WORKFLOW_PATH
    if workflow.exists() and not args.force:
        raise UsageError(
            f"{workflow} already exists; stepkit ci writes nothing over it (--force replaces it)"
        )
    ready = StepStates(repo, last_runs(runs_dir(project))).ready()
    if not ready:
        raise UsageError(
            f"no ready step in {repo.steps_dir} (each is complete, waits in a paused "
            "run or waits for a dependency: stepkit status says which); nothing was written"
        )
    try:
        text = github_workflow(
            [(step.number, step.title) for step in ready],
            plans_dir=_posix(os.path.relpath(plans.resolve(), project)),
            install=stepkit_source(args.stepkit_source, root),
            project_dir=_posix(os.path.relpath(project, root)),
            version=__version__,
        )
    except ValueError as exc:
        raise UsageError(f"{exc} (nothing was written)") from None
    workflow.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(workflow, text.encode("utf-8"))
    print(
        f"Wrote {workflow}: one job per ready step ({', '.join(str(s.number) for s in ready)}), "
        "and a job that resumes a paused run answered on the pull request."
    )
    print(
        "Set the repository secrets ANTHROPIC_API_KEY and STEPKIT_SEAL_KEY (openssl rand -hex 32)."
    )
    return 0


def _posix(path: str) -> str:
    return Path(path).as_posix()
