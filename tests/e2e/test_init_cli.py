"""``stepkit init`` as a new user runs it: a plan repo that ``stepkit status``
reads at once, the detected gates with the plugin that chose each, and nothing
written over what exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.planrepo.model import PlanRepo
from stepkit.protocol.criteria import plan_criteria
from tests.support.cli import stepkit


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "lib"\n\n[tool.ruff]\n')
    return tmp_path


def test_init_writes_a_plan_repo_that_status_reads_at_once(project):
    done = stepkit("init", cwd=project)
    assert done.returncode == 0, done.stderr
    step = project / "plans" / "steps" / "01-first-step.md"
    assert step.is_file() and (project / "plans" / "NOTES.md").is_file()
    assert (project / "plans" / "handoffs").is_dir()
    assert "Project type: python" in done.stdout
    assert "lint    ruff check  (chosen by stepkit.plugins.projects.python)" in done.stdout
    assert "tests   none found: NOT RUN" in done.stdout
    assert "stepkit run" in done.stdout and "stepkit never commits" in done.stdout

    status = stepkit("status", "--json", cwd=project)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["next"] == 1 and data["problems"] == []
    assert [(s["step"], s["title"], s["status"]) for s in data["steps"]] == [
        (1, "First step", "pending")
    ]


def test_the_template_has_every_section_the_protocol_reads_and_one_criterion(project):
    assert stepkit("init", cwd=project).returncode == 0
    plan = PlanRepo.load(project / "plans").step(1)
    text = plan.path.read_text()
    for section in (
        "Objective",
        "Context",
        "Tasks",
        "Acceptance criteria",
        "Test commands",
        "Edge cases",
        "Out of scope",
    ):
        assert f"\n## {section}\n" in text
    assert plan_criteria(text) == ["`example()` returns `42`."]


@pytest.mark.parametrize(
    "existing", ["plans/NOTES.md", "plans/steps/07-mine.md", "plans/handoffs/.gitkeep"]
)
def test_init_refuses_to_write_over_anything_and_writes_nothing(project, existing):
    target = project / existing
    target.parent.mkdir(parents=True)
    target.write_text("mine\n")
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    done = stepkit("init", cwd=project)
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
    assert "already exists" in done.stderr and "nothing was written" in done.stderr
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before
    assert target.read_text() == "mine\n"


def test_init_takes_another_plans_dir_and_names_it_in_the_next_commands(project):
    done = stepkit("init", "--plans-dir", "docs/plan", cwd=project)
    assert done.returncode == 0, done.stderr
    assert (project / "docs" / "plan" / "steps" / "01-first-step.md").is_file()
    assert "stepkit status --plans-dir docs/plan" in done.stdout
    status = stepkit("status", "--plans-dir", "docs/plan", "--json", cwd=project)
    assert json.loads(status.stdout)["next"] == 1
