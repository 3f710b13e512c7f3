"""``stepkit plan SPEC|-`` as a user runs it, on the scripted engine: the
drafted steps written as files ``stepkit status`` reads with no problem and
the dependency chain as drafted, the spec's facts in NOTES.md, the merge
driver registered; ``--append`` numbered on after the existing steps; and
nothing written (exit 2, one line) over a plan that has steps, or for a
draft that fails its checks even when asked once more."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from stepkit.planrepo.model import PlanRepo
from stepkit.planrepo.sections import plan_section
from stepkit.protocol.criteria import plan_criteria
from tests.support import cli
from tests.support.e2e import clean_env
from tests.support.gitrepo import git

SPEC = """# Slugs for titles

Add a `slugify(text)` function to `textkit/slug.py` that lowercases a
title and joins its words with hyphens; then a `--max-length` option of the
`textkit` command that cuts the slug at a word boundary.

Tests run with `pytest -q` from the project root.
"""


def step(number: int, title: str, depends_on: list[int], **fields: Any) -> dict[str, Any]:
    return {
        "number": number,
        "title": title,
        "objective": f"{title} works.",
        "context": ["`textkit/__init__.py` exports the package's functions."],
        "tasks": [
            f"Change `textkit/step{number}.py`.",
            f"Test it in `tests/test_step{number}.py`.",
        ],
        "acceptance_criteria": [f"{title}: the first behaviour", f"{title}: the second one"],
        "test_commands": [f"pytest -q tests/test_step{number}.py"],
        "edge_cases": ["An empty title gives an empty slug."],
        "out_of_scope": ["Unicode transliteration."],
        "depends_on": depends_on,
        **fields,
    }


DRAFT = {
    "notes": ["Tests run with `pytest -q` from the project root."],
    "steps": [
        step(1, "Add slugify", []),
        step(2, "Cut slugs at a word boundary", [1]),
        step(3, "The --max-length option", [1, 2]),
    ],
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return spec_project(tmp_path)


def spec_project(tmp_path: Path) -> Path:
    """A git repository with a pyproject.toml and the spec, no plan yet."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "textkit"\n')
    (root / "spec.md").write_text(SPEC)
    git(root, "init", "-q")
    return root


def answers(project: Path, *drafts: dict[str, Any], name: str = "answers.yaml") -> str:
    """The scripted engine's file: one draft for every call, or one per call."""
    path = project.parent / name
    path.write_text(yaml.safe_dump({"plan": drafts[0] if len(drafts) == 1 else list(drafts)}))
    return f"scripted:{path}"


def stepkit(
    project: Path, *args: str, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess:
    return cli.stepkit(
        *args,
        cwd=project,
        env=clean_env(**env),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def status(project: Path) -> dict[str, Any]:
    done = stepkit(project, "status", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def chain(project: Path) -> list[tuple[int, str, list[int], str]]:
    data = status(project)
    assert data["problems"] == []
    return [(s["step"], s["title"], s["depends_on"], s["status"]) for s in data["steps"]]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_spec_becomes_three_step_files_that_status_reads_with_their_chain(project):
    done = stepkit(project, "plan", "spec.md", "--engine", answers(project, DRAFT))
    assert done.returncode == 0, done.stderr
    assert "plans/steps/03-the-max-length-option.md  The --max-length option  (after 1, 2)" in (
        done.stdout
    )
    assert chain(project) == [
        (1, "Add slugify", [], "pending"),
        (2, "Cut slugs at a word boundary", [1], "pending"),
        (3, "The --max-length option", [1, 2], "pending"),
    ]
    assert status(project)["next"] == 1
    plan = PlanRepo.load(project / "plans").step(2)
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
        assert plan_section(plan.body, section), section
    assert plan_criteria(text) == DRAFT["steps"][1]["acceptance_criteria"]
    assert "- `pytest -q tests/test_step2.py`" in text
    notes = (project / "plans" / "NOTES.md").read_text()
    assert "- Tests run with `pytest -q` from the project root. (from spec.md)" in notes
    assert (project / "plans" / "handoffs").is_dir()
    driver = subprocess.run(
        ["git", "config", "--get", "merge.stepkit-plan.driver"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "-m stepkit merge-driver" in driver.stdout
    assert "/plans/steps/*.md merge=stepkit-plan" in (project / ".git/info/attributes").read_text()


def test_the_spec_can_come_on_stdin(project):
    done = stepkit(project, "plan", "-", "--engine", answers(project, DRAFT), stdin=SPEC)
    assert done.returncode == 0, done.stderr
    assert [number for number, *_ in chain(project)] == [1, 2, 3]
    assert "(from the spec on stdin)" in (project / "plans" / "NOTES.md").read_text()


def test_append_numbers_the_draft_on_and_maps_its_dependencies(project):
    assert stepkit(project, "init").returncode == 0
    appended = {
        "steps": [
            step(1, "Add slugify", [], depends_on_existing=[1]),
            step(2, "Cut slugs at a word boundary", [1]),
        ]
    }
    done = stepkit(project, "plan", "spec.md", "--append", "--engine", answers(project, appended))
    assert done.returncode == 0, done.stderr
    assert chain(project) == [
        (1, "First step", [], "pending"),
        (2, "Add slugify", [1], "pending"),
        (3, "Cut slugs at a word boundary", [2], "pending"),
    ]


def test_init_then_plan_writes_the_draft_in_place_of_inits_untouched_template(project):
    """The first hour in either order: init's template step is no one's work yet."""
    assert stepkit(project, "init").returncode == 0
    done = stepkit(project, "plan", "spec.md", "--engine", answers(project, DRAFT))
    assert done.returncode == 0, done.stderr
    assert not (project / "plans" / "steps" / "01-first-step.md").exists()
    assert [s[:2] for s in chain(project)] == [
        (1, "Add slugify"),
        (2, "Cut slugs at a word boundary"),
        (3, "The --max-length option"),
    ]


def test_a_plan_with_steps_is_never_written_over_and_the_engine_is_not_asked(project):
    assert stepkit(project, "init").returncode == 0
    first = project / "plans" / "steps" / "01-first-step.md"
    first.write_text(first.read_text() + "\nA line of the user's own.\n")  # someone's work now
    before = tree(project / "plans")
    no_answer = project.parent / "empty.yaml"
    no_answer.write_text("{}\n")  # asked at all, the engine would fault with another message
    done = stepkit(project, "plan", "spec.md", "--engine", f"scripted:{no_answer}")
    assert done.returncode == 2
    assert "already has 1 step(s)" in done.stderr and "--append" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert tree(project / "plans") == before


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        (
            step(2, "Cut slugs", [1], acceptance_criteria=[]),
            "step 2 (Cut slugs): no acceptance criteria",
        ),
        (
            step(2, "Cut slugs", [3]),
            "step 2 (Cut slugs): depends on step 3, which is not an earlier step of the draft",
        ),
        (
            step(2, "Cut slugs", [1], tasks=["Make the slug shorter."]),
            "step 2 (Cut slugs): no task names a file",
        ),
        (
            step(2, "Cut slugs", [1], objective="# Cut them"),
            "plans/steps/02-cut-slugs.md: its Objective does not read back as drafted",
        ),
    ],
)
def test_an_invalid_draft_is_one_line_exit_2_and_nothing_is_written(project, broken, problem):
    draft = {"steps": [step(1, "Add slugify", []), broken, step(3, "Last", [1])]}
    done = stepkit(project, "plan", "spec.md", "--engine", answers(project, draft))
    assert done.returncode == 2, done.stderr
    assert problem in done.stderr and "nothing was written" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (project / "plans").exists()


def test_an_invalid_draft_is_asked_for_once_more_and_the_second_is_written(project):
    invalid = {"steps": [step(1, "Add slugify", [2]), step(2, "Second", [])]}
    done = stepkit(project, "plan", "spec.md", "--engine", answers(project, invalid, DRAFT))
    assert done.returncode == 0, done.stderr
    assert [title for _, title, *_ in chain(project)] == [s["title"] for s in DRAFT["steps"]]


def test_an_engine_fault_is_one_line_exit_1_and_nothing_is_written(project):
    done = stepkit(
        project, "plan", "spec.md", "--engine", answers(project, {"fault": "overloaded"})
    )
    assert done.returncode == 1
    assert done.stderr.strip() == "stepkit: error: the engine gave no draft: overloaded"
    assert not (project / "plans").exists()


def test_an_empty_spec_is_refused_before_the_engine_is_asked(project):
    (project / "empty.md").write_text("\n  \n")
    done = stepkit(project, "plan", "empty.md", "--engine", answers(project, DRAFT))
    assert done.returncode == 2 and "the spec is empty" in done.stderr
    assert not (project / "plans").exists()


LOCAL_PLANNER = """import json, pathlib
import stepkit


@stepkit.hookimpl
def stepkit_draft_plan(ctx, spec, existing, problems):
    pathlib.Path("asked.json").open("a").write(json.dumps(problems) + "\\n")
    title = spec.splitlines()[0].lstrip("# ")
    depends_on = [] if problems else [2]
    return {"steps": [{"number": 1, "title": title, "objective": "Slugs.", "depends_on": depends_on,
                       "tasks": ["Add `textkit/slug.py`."], "acceptance_criteria": ["slugs"]}]}
"""


def test_a_projects_own_planner_answers_first_and_is_told_the_problems(project):
    (project / "stepconf.py").write_text(LOCAL_PLANNER)
    assert stepkit(project, "trust").returncode == 0
    no_answer = project.parent / "empty.yaml"
    no_answer.write_text("{}\n")  # the built-in planner, asked, would fault
    done = stepkit(project, "plan", "spec.md", "--engine", f"scripted:{no_answer}")
    assert done.returncode == 0, done.stderr
    assert chain(project) == [(1, "Slugs for titles", [], "pending")]
    asked = [json.loads(line) for line in (project / "asked.json").read_text().splitlines()]
    assert asked == [
        [],
        ["step 1 (Slugs for titles): depends on step 2, which is not an earlier step of the draft"],
    ]
