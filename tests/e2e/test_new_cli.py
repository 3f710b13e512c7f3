"""``stepkit new TITLE``: the next step file from the template, numbered on
from the last step, that ``stepkit status`` reads with its title and
dependencies as given; nothing written on a bad request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_init_cli import stepkit


@pytest.fixture
def plans(tmp_path: Path) -> Path:
    assert stepkit("init", cwd=tmp_path).returncode == 0
    return tmp_path


def steps(project: Path) -> list[tuple[int, str, list[int]]]:
    status = stepkit("status", "--json", cwd=project)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["problems"] == []
    return [(s["step"], s["title"], s["depends_on"]) for s in data["steps"]]


@pytest.mark.parametrize(
    "title",
    ["Add login", 'Parse "quoted" names: #1 & more', "- [x]: {a}", "Ünïcode ✓ step", "123"],
)
def test_new_writes_the_next_step_that_status_reads_back_with_its_title(plans, title):
    done = stepkit("new", title, "--depends-on", "1", cwd=plans)
    assert done.returncode == 0, done.stderr
    written = sorted((plans / "plans" / "steps").glob("02-*.md"))
    assert len(written) == 1 and f"Wrote plans/steps/{written[0].name}" in done.stdout
    assert steps(plans) == [(1, "First step", []), (2, title, [1])]


def test_new_numbers_on_from_the_highest_step_even_past_a_gap(plans):
    (plans / "plans" / "steps" / "07-later.md").write_text(
        "---\ntitle: Later\ndepends_on: []\n---\n\n## Objective\nx\n"
    )
    assert stepkit("new", "After the gap", cwd=plans).returncode == 0
    assert (plans / "plans" / "steps" / "08-after-the-gap.md").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["Depends on a later one", "--depends-on", "2"], "there is no step 2 before step 2"),
        (["Bad list", "--depends-on", "1;2"], "expected step numbers separated by commas"),
        (["   "], "needs a one-line title"),
    ],
)
def test_a_bad_request_is_one_line_exit_2_and_nothing_is_written(plans, args, message):
    before = sorted((plans / "plans" / "steps").iterdir())
    done = stepkit("new", *args, cwd=plans)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert sorted((plans / "plans" / "steps").iterdir()) == before


def test_new_without_a_plan_repo_says_to_run_init(tmp_path):
    done = stepkit("new", "First", cwd=tmp_path)
    assert done.returncode == 2 and "stepkit init" in done.stderr
