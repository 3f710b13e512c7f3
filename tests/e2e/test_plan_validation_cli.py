"""One validation of the plan for every command: the problems ``stepkit
status`` names (duplicate step numbers, cycles, missing dependencies,
self-dependencies, malformed files) stop ``run``, ``run --parallel``,
``run --worktree``, ``stage`` and ``ci`` with exit 2 and one line naming the
problem as status names it, before anything is started.  Real CLI, real git
project (tests/support/e2e.py)."""

from __future__ import annotations

import subprocess

import pytest

from stepkit.ciworkflow import WORKFLOW_PATH
from stepkit.workspace.store import store_dir
from tests.support.e2e import make_project, plan


def commit_all(project) -> None:
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "plan edit")


def a_plan_with(tmp_path, files: dict[str, str]):
    """The e2e project with ``files`` added to its plan repo, committed."""
    project = make_project(tmp_path)
    for name, text in files.items():
        (project.plans / "steps" / name).write_text(text)
    commit_all(project)
    return project


def status_problems(project) -> list[str]:
    result = project.stepkit("status", "--project-dir", str(project.root))
    assert result.code == 0, result.stderr
    return result.data["problems"]


def nothing_started(project) -> None:
    runs = store_dir(project.root) / "runs"
    assert not runs.is_dir() or not any(runs.iterdir())
    assert project.coder_calls() == 0
    assert project.git("worktree", "list").count("\n") == 1
    assert project.git("branch", "--list", "stepkit/*") == ""
    assert not (project.root / WORKFLOW_PATH).exists()


COMMANDS = {
    "run": lambda p: p.run_args(),
    "run --parallel 4": lambda p: p.run_args("--parallel", "4"),
    "run --worktree": lambda p: p.run_args("--worktree"),
    "stage": lambda p: ["stage", "orient", "--step", "1", "--project-dir", str(p.root)],
    "ci": lambda p: ["ci", "--project-dir", str(p.root)],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_duplicate_step_numbers_stop_every_command_with_the_line_status_prints(tmp_path, command):
    project = a_plan_with(tmp_path, {"01-also-mul.md": plan(1, "Also mul", [])})
    [problem] = status_problems(project)
    assert "duplicate step number 1" in problem

    result = project.stepkit(*COMMANDS[command](project), json_out=False)

    assert result.code == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [f"stepkit: error: {problem}; nothing was started"]
    assert result.stdout == ""
    nothing_started(project)


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({"04-loop.md": plan(4, "Loop", [5]), "05-back.md": plan(5, "Back", [4])}, "cycle: 4"),
        (
            {"04-lost.md": plan(4, "Lost", [9])},
            "depends on step 9, which does not exist (edit its depends_on)",
        ),
        ({"04-self.md": plan(4, "Self", [4])}, "step 4 depends on itself (edit its depends_on)"),
    ],
    ids=["cycle", "missing dependency", "self-dependency"],
)
def test_ci_refuses_a_plan_with_any_problem_status_names(tmp_path, files, named):
    project = a_plan_with(tmp_path, files)
    [problem] = status_problems(project)
    assert named in problem

    result = project.stepkit("ci", "--project-dir", str(project.root), json_out=False)

    assert result.code == 2
    assert result.stderr.splitlines() == [f"stepkit: error: {problem}; nothing was started"]
    nothing_started(project)


def test_several_problems_are_one_line_that_says_how_many_more(tmp_path):
    project = a_plan_with(
        tmp_path, {"01-also-mul.md": plan(1, "Also mul", []), "04-lost.md": plan(4, "Lost", [9])}
    )
    first, _ = status_problems(project)

    result = project.stepkit(*project.run_args(), json_out=False)

    assert result.code == 2
    more = "(and 1 more problem: stepkit status lists them)"
    assert result.stderr.splitlines() == [f"stepkit: error: {first} {more}; nothing was started"]
    nothing_started(project)


def test_a_plan_problem_outside_git_stops_the_run_too(tmp_path):
    project = make_project(tmp_path)
    subprocess.run(["rm", "-rf", str(project.root / ".git")], check=True)
    (project.plans / "steps" / "04-self.md").write_text(plan(4, "Self", [4]))
    result = project.stepkit(*project.run_args(), json_out=False)
    assert (
        result.code == 2
        and "step 4 depends on itself (edit its depends_on); nothing was started" in result.stderr
    )
    assert project.coder_calls() == 0
