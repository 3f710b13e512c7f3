"""Which steps ``stepkit run --parallel`` starts (stepkit/worktrees/schedule.py),
on plan repos written to a tmp dir, and how the runs' exit codes combine
(stepkit/worktrees/parallel.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.planrepo.model import PlanRepo
from stepkit.planrepo.quality import NO_FILE
from stepkit.worktrees.parallel import SEVERITY, worst_exit_code
from stepkit.worktrees.schedule import Schedule

#: a plan a reviewer takes (stepkit/planrepo/quality.py)
BODY = "## Objective\nDo it.\n\n## Tasks\n- Change `a.py`.\n\n## Acceptance criteria\n- It works.\n"


def write_plan(
    plans: Path,
    deps: dict[int, list[int]],
    status: dict[int, str] | None = None,
    complete: tuple[int, ...] = (),
) -> PlanRepo:
    (plans / "steps").mkdir(parents=True)
    (plans / "handoffs").mkdir()
    for number, depends in deps.items():
        state = (status or {}).get(number, "pending")
        (plans / "steps" / f"{number:02d}-s{number}.md").write_text(
            f"---\nstep: {number}\ntitle: Step {number}\ndepends_on: {depends}\nstatus: {state}\n---\n\n{BODY}"
        )
    for number in complete:
        (plans / "handoffs" / f"{number:02d}-s{number}.md").write_text(
            f"---\nstep: {number}\nresult: complete\n---\n\nDone\n"
        )
    return PlanRepo.load(plans)


def numbers(schedule: Schedule) -> list[tuple[int, str | None]]:
    return [(r.step.number, r.base.branch if r.base else None) for r in schedule.ready()]


def test_ready_steps_are_those_to_do_whose_dependencies_are_complete_on_the_users_branch(tmp_path):
    repo = write_plan(
        tmp_path / "plans",
        {1: [], 2: [], 3: [1], 4: [1, 2], 5: [3]},
        status={1: "complete"},
        complete=(1,),
    )
    assert numbers(Schedule(repo)) == [(2, None), (3, None)]


def test_a_step_complete_by_its_handoff_alone_is_not_run_again(tmp_path):
    repo = write_plan(tmp_path / "plans", {1: [], 2: []}, complete=(1,))
    assert numbers(Schedule(repo)) == [(2, None)]


def test_a_started_step_is_not_ready_again(tmp_path):
    schedule = Schedule(write_plan(tmp_path / "plans", {1: [], 2: []}))
    schedule.start(schedule.ready()[0])
    assert numbers(schedule) == [(2, None)]


def test_without_stack_a_branch_of_this_invocation_readies_nothing(tmp_path):
    schedule = Schedule(write_plan(tmp_path / "plans", {1: [], 2: [1]}))
    first = schedule.ready()[0]
    schedule.start(first)
    schedule.complete(first, "stepkit/01-s1")
    assert numbers(schedule) == []
    assert [(step.number, why) for step, why in schedule.waiting()] == [
        (2, "waits for step 1 (Step 1): no handoff")
    ]


def test_with_stack_a_dependent_step_starts_from_its_dependencys_branch(tmp_path):
    schedule = Schedule(write_plan(tmp_path / "plans", {1: [], 2: [1], 3: [2]}), stack=True)
    first = schedule.ready()[0]
    schedule.start(first)
    assert numbers(schedule) == []
    schedule.complete(first, "stepkit/01-s1")
    assert numbers(schedule) == [(2, "stepkit/01-s1")]
    second = schedule.ready()[0]
    schedule.start(second)
    schedule.complete(second, "stepkit/02-s2")
    # the branch started from step 1's holds step 1 too
    assert numbers(schedule) == [(3, "stepkit/02-s2")]
    assert schedule.finished[-1].steps == {1, 2}


def test_with_stack_dependencies_on_two_separate_branches_start_nothing(tmp_path):
    """No one branch holds both: the step waits for a merge instead of losing one of them."""
    schedule = Schedule(write_plan(tmp_path / "plans", {1: [], 2: [], 3: [1, 2]}), stack=True)
    for ready, branch in zip(schedule.ready(), ("stepkit/01-s1", "stepkit/02-s2"), strict=True):
        schedule.start(ready)
        schedule.complete(ready, branch)
    assert numbers(schedule) == []


def test_with_stack_a_dependency_complete_on_the_users_branch_needs_no_branch(tmp_path):
    schedule = Schedule(
        write_plan(tmp_path / "plans", {1: [], 2: [], 3: [1, 2]}, complete=(1,)), stack=True
    )
    second = schedule.ready()[0]
    assert second.step.number == 2
    schedule.start(second)
    schedule.complete(second, "stepkit/02-s2")
    assert numbers(schedule) == [(3, "stepkit/02-s2")]


@pytest.mark.parametrize(
    ("codes", "worst"),
    [
        ([0, 0], 0),
        ([0, 4, 3], 3),
        ([4, 1, 3], 1),
        ([1, 2], 2),
        ([1, 5, 2], 5),
        ([5, 130, 0], 130),
        ([0, 137, 5], 137),
        ([], 0),
    ],
)
def test_the_exit_code_is_the_worst_of_the_runs(codes, worst):
    assert worst_exit_code(codes) == worst


def test_every_exit_code_of_a_run_has_a_rank():
    assert set(SEVERITY) == {"signal", 0, 1, 2, 3, 4, 5}


def test_a_step_under_way_elsewhere_is_not_started_and_says_why(tmp_path):
    schedule = Schedule(
        write_plan(tmp_path / "plans", {1: [], 2: []}),
        elsewhere={1: "paused in /wt/01-s1 (branch stepkit/01-s1); stepkit resume R1"},
    )
    assert numbers(schedule) == [(2, None)]
    assert [(step.number, why) for step, why in schedule.waiting()] == [
        (1, "paused in /wt/01-s1 (branch stepkit/01-s1); stepkit resume R1"),
        (2, "ready, not started"),
    ]


def test_a_step_whose_plan_is_incomplete_waits_unless_allowed(tmp_path):
    repo = write_plan(tmp_path / "plans", {1: [], 2: []})
    path = repo.step(1).path
    path.write_text(path.read_text().replace("- Change `a.py`.", "- Make it better."))
    repo = PlanRepo.load(tmp_path / "plans")
    assert numbers(Schedule(repo)) == [(2, None)]
    step, why = Schedule(repo).waiting()[0]
    assert (step.number, why) == (1, f"its plan is incomplete: {NO_FILE}")
    assert numbers(Schedule(repo, allow_incomplete=True)) == [(1, None), (2, None)]
