"""The checks a drafted plan passes before ``stepkit plan`` writes it: one
line per problem, naming the step; and the files it becomes read back by
the plan repo's own parser as drafted."""

from __future__ import annotations

import pytest

from stepkit.planrepo.draft import PlanDraft, draft_problems, names_a_file
from stepkit.planrepo.drafted import Target


def draft(*steps: dict) -> PlanDraft:
    return PlanDraft.model_validate({"steps": list(steps)})


def step(number: int, **fields) -> dict:
    return {
        "number": number,
        "title": f"Step {number}",
        "objective": "It works.",
        "tasks": ["Change `app.py`."],
        "acceptance_criteria": ["it works"],
        **fields,
    }


@pytest.mark.parametrize(
    ("steps", "existing", "problem"),
    [
        ([step(1), step(1)], (), "step 1 (Step 1): step number 1 appears twice in the draft"),
        ([step(1, depends_on=[1])], (), "step 1 (Step 1): depends on itself"),
        (
            [step(1, depends_on_existing=[4])],
            (1, 2),
            (
                "step 1 (Step 1): depends on existing step 4, which the plan does not have "
                "(existing steps: 1, 2)"
            ),
        ),
        ([step(1, objective="  ")], (), "step 1 (Step 1): no objective"),
        ([step(1, acceptance_criteria=["", " "])], (), "step 1 (Step 1): no acceptance criteria"),
        ([], (), "the draft has no steps"),
    ],
)
def test_each_problem_is_one_line_naming_the_step(steps, existing, problem):
    assert draft_problems(draft(*steps), existing) == [problem]


def test_a_dependency_on_an_existing_step_is_fine_with_it_there():
    assert draft_problems(draft(step(1, depends_on_existing=[2])), (1, 2)) == []


@pytest.mark.parametrize(
    ("task", "named"),
    [
        ("Create `src/pkg/app.py`.", True),
        ("Set it in `pyproject.toml`.", True),
        ("Add tests under `tests/`.", True),
        ("Call `app.run()`.", False),
        ("Change app.py.", False),
        ("Make it faster.", False),
    ],
)
def test_a_task_names_a_file_as_a_backticked_path(task, named):
    assert names_a_file(task) is named


def test_the_files_are_numbered_on_after_the_existing_steps_with_dependencies_mapped(tmp_path):
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "07-old.md").write_text("---\ntitle: Old\n---\n\n## Objective\nx\n")
    target = Target.of(tmp_path)
    drafted = draft(step(1, depends_on_existing=[7]), step(2, depends_on=[1]))
    assert target.problems(drafted) == []
    files = target.files(drafted)
    assert [(f.path.name, f.depends_on) for f in files] == [
        ("08-step-1.md", [7]),
        ("09-step-2.md", [8]),
    ]


def test_a_section_that_would_not_read_back_is_a_problem(tmp_path):
    target = Target.of(tmp_path)
    assert target.problems(draft(step(1, objective="# A heading, not an objective"))) == [
        f"{tmp_path}/steps/01-step-1.md: its Objective does not read back as drafted"
    ]
