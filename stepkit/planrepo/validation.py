"""The one validation of the plan repo that every command which starts
something (``run``, ``run --parallel``, ``run --worktree``, ``stage``,
``ci``) makes before it starts anything: a plan repo with a problem
``stepkit status`` names (duplicate step numbers, dependency cycles,
missing dependencies, self-dependencies, malformed or unreadable files) is
refused with one line, the problem as status prints it.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.errors import PlanError, UsageError
from stepkit.planrepo.model import PlanRepo


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
