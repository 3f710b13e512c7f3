"""The one validation of the plan repo that every command which starts
something (``run``, ``run --parallel``, ``run --worktree``, ``stage``,
``ci``) makes before it starts anything: a plan repo with a problem
``stepkit status`` names (duplicate step numbers, dependency cycles,
missing dependencies, self-dependencies, malformed or unreadable files) is
refused with one line, the problem as status prints it.

A step whose plan is incomplete (:mod:`stepkit.planrepo.quality`) blocks
only itself: ``run`` refuses to run it (:func:`incomplete_step`) unless
``--allow-incomplete-plan``.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.errors import PlanError, UsageError
from stepkit.planrepo.model import PlanRepo, StepPlan
from stepkit.planrepo.quality import step_findings

#: the run option that runs an incomplete step all the same
ALLOW_INCOMPLETE = "--allow-incomplete-plan"


def problem_line(problems: list[str]) -> str | None:
    """The first of ``problems`` as one line, saying how many more there are
    (None: there is none)."""
    if not problems:
        return None
    more = len(problems) - 1
    if not more:
        return problems[0]
    return f"{problems[0]} (and {more} more problem{'s' if more > 1 else ''}: stepkit status lists them)"


def valid_plan(plans_dir: Path | str) -> PlanRepo | None:
    """The plan repo at ``plans_dir``, refused when it has a problem; None
    when there is no plan repo there (a command that needs one says so).

    :raises UsageError: the repo has a problem (one line, the first problem
        as ``stepkit status`` names it); nothing was started.
    """
    try:
        repo = PlanRepo.load(plans_dir)
    except PlanError:
        return None
    line = problem_line(repo.problems)
    if line is not None:
        raise UsageError(f"{line}; nothing was started")
    return repo


def incomplete_step(repo: PlanRepo, step: StepPlan, allow: bool) -> list[str]:
    """What ``step``'s plan lacks (:func:`~stepkit.planrepo.quality.step_findings`),
    when ``allow`` lets the run go on with it; empty when it lacks nothing.

    :raises UsageError: it lacks something and ``allow`` is not set (one
        line with every finding); nothing was started.
    """
    findings = step_findings(repo, step)
    if findings and not allow:
        raise UsageError(
            f"step {step.number} ({step.title}) is incomplete: {'; '.join(findings)}; fill it in "
            f"(stepkit status lists what is missing) or pass {ALLOW_INCOMPLETE}; "
            "no run was started"
        )
    return findings


def incomplete_deviation(findings: list[str] | None) -> list[str]:
    """The handoff's Deviations line of a step run with :data:`ALLOW_INCOMPLETE`
    (none when its plan lacked nothing)."""
    return [f"run with {ALLOW_INCOMPLETE}: {'; '.join(findings)}"] if findings else []
