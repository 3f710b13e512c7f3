"""The plan repo's state as data: the ``--json`` object of ``stepkit status``
(fixed keys), also what :func:`stepkit.api.plan_status` returns."""

from __future__ import annotations

from typing import Any

from stepkit.planrepo.model import PlanRepo


def status_report(repo: PlanRepo) -> dict[str, Any]:
    """Every step with its status, dependencies and handoff; the step ``next``
    picks; the repo's problems.  A repo unchanged since its report was kept
    (:meth:`PlanRepo.load` with a cache) gives that report without being read."""
    if repo.cached_report is not None:
        return dict(repo.cached_report)
    following = repo.next_step()
    steps = []
    for step in repo.steps:
        unsatisfied = repo.unsatisfied(step)
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
