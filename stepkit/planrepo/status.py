"""The plan repo's state as data: the ``--json`` object of ``stepkit status``
(fixed keys), also what :func:`stepkit.api.plan_status` returns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stepkit.planrepo.model import PlanRepo
from stepkit.planrepo.quality import step_findings
from stepkit.planrepo.stepstate import StepStates, standing


def status_report(
    repo: PlanRepo, runs: Mapping[int, Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """Every step with its status, dependencies, handoff and where it stands
    (``state`` and ``state_why``, :func:`~stepkit.planrepo.stepstate.standing`
    with ``runs``, the latest run of each step) and why its plan is
    incomplete (``incomplete``, :func:`~stepkit.planrepo.quality.step_findings`);
    the step ``next`` picks; the repo's problems."""
    report = _plan_report(repo)
    return {
        **report,
        "steps": [
            {**step, **_standing(step, (runs or {}).get(step["step"]))} for step in report["steps"]
        ],
    }


def _standing(step: dict[str, Any], run: Mapping[str, Any] | None) -> dict[str, str]:
    found = standing(step["status"], step["handoff"], step["handoff_result"], run)
    return {"state": found.state, "state_why": found.why}


def _plan_report(repo: PlanRepo) -> dict[str, Any]:
    """The part of the report the plan repo alone decides.  A repo unchanged
    since it was kept (:meth:`PlanRepo.load` with a cache) gives it without
    being read."""
    if repo.cached_report is not None:
        return dict(repo.cached_report)
    following = repo.next_step()
    states = StepStates(repo)
    steps = []
    for step in repo.steps:
        unsatisfied = states.unsatisfied(step)
        handoff = repo.handoffs.get(step.number)
        steps.append(
            {
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
                "incomplete": step_findings(repo, step),
            }
        )
    report = {
        "plans_dir": str(repo.plans_dir),
        "next": following.number if following else None,
        "steps": steps,
        "problems": list(repo.problems),
    }
    if repo.keep_report is not None:
        repo.keep_report(report)
    return report
