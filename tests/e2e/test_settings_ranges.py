"""A setting out of its range is refused before anything runs: exit 2, one
line naming the key, the value and what it takes.  A negative, zero or
huge timeout, a boolean where a number belongs and a string where a boolean
belongs, from ``stepkit.toml`` and ``[tool.stepkit]``, through the real
``stepkit verify`` and ``stepkit run``; ``--set`` budgets the same."""

from __future__ import annotations

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import Project, make_project


def configured(tmp_path, table: str) -> Project:
    """The e2e project with ``table`` put before its ``[commands]``."""
    project = make_project(tmp_path, reviewer=False)
    config = project.root / "stepkit.toml"
    config.write_text(table + config.read_text())
    return project


def assert_refused(result, *words: str) -> None:
    assert result.code == 2, (result.stdout, result.stderr)
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def assert_nothing_ran(project: Project) -> None:
    store = store_dir(project.root)
    assert not (store / "runs").exists() or not any((store / "runs").iterdir())
    assert not (project.state_dir / "coder_calls").exists()


@pytest.mark.parametrize("value", ["-5", "0", "1e9", "true"])
def test_a_timeout_out_of_range_is_refused_by_verify_and_run(tmp_path, value):
    project = configured(tmp_path, f"[timeouts]\ntests = {value}\n\n")
    shown = "1000000000.0" if value == "1e9" else value
    range_words = ("timeouts.tests", shown, "above 0", "at most 86400")

    assert_refused(project.stepkit("verify", "--project-dir", str(project.root)), *range_words)
    assert_refused(project.run("--step", "1"), *range_words)
    assert_nothing_ran(project)


def test_a_budget_out_of_range_is_refused_before_the_run(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    assert_refused(
        project.run("--step", "1", "--set", "max_fix_attempts=-1"),
        "max_fix_attempts",
        "-1",
        "from 0 to",
    )
    assert_nothing_ran(project)


def test_pyproject_settings_are_held_to_the_same_types(tmp_path):
    # a string for a boolean, a no-output limit of zero: in [tool.stepkit], not stepkit.toml
    project = make_project(tmp_path, reviewer=False)
    table = (
        (project.root / "stepkit.toml").read_text().replace("[commands]", "[tool.stepkit.commands]")
    )
    (project.root / "stepkit.toml").unlink()
    (project.root / "pyproject.toml").write_text(f'[tool.stepkit]\nworktree = "yes"\n\n{table}')
    assert_refused(
        project.run("--step", "1"), "pyproject.toml", "worktree", '"yes"', "true or false"
    )
    text = (project.root / "pyproject.toml").read_text()
    (project.root / "pyproject.toml").write_text(
        text.replace('worktree = "yes"', "timeouts = {no_output = 0}")
    )
    assert_refused(
        project.stepkit("verify", "--project-dir", str(project.root)),
        "timeouts.no_output",
        "0",
        "above 0",
    )
    assert_nothing_ran(project)


def test_a_worktree_table_is_held_to_its_types(tmp_path):
    # `worktree = true` and a [worktree] table share the key: the table's keys are checked too
    project = configured(tmp_path, "[worktree]\ndefault = true\nsetup = 3\n\n")
    assert_refused(project.run("--step", "1"), "stepkit.toml", "worktree.setup", "3")
    (project.root / "stepkit.toml").write_text(
        (project.root / "stepkit.toml").read_text().replace("setup = 3", 'setpu = "npm ci"')
    )
    assert_refused(project.run("--step", "1"), "worktree.setpu", "unknown field")
    assert_nothing_ran(project)


@pytest.mark.parametrize(
    ("name", "value"), [("STEP_AUTOAPPROVE", "yess"), ("STEP_SKIP_REVIEW", "2")]
)
def test_an_environment_switch_that_is_not_a_boolean_is_refused(tmp_path, name, value):
    project = make_project(tmp_path, reviewer=False)
    refused = project.run("--step", "1", env=project.env(**{name: value}))
    assert_refused(refused, name, repr(value), "takes 1 or 0")
    assert_nothing_ran(project)
