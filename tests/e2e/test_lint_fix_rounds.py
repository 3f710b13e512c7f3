"""A fix round's lint runs on the files the step changed (and those the last
lint failed on) where the linter's verdict on a file is that file's alone;
the step proceeds only on the project's whole lint command.

Real ruff and mypy in a tmp git project, the real CLI, a command coder whose
first round fails the tests gate (tests/support/e2e.py).  The lint command
is a wrapper on PATH that appends its working directory and arguments to a
marker file, then runs the real tool.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.test_hostile_coder import TEST_MUL, python_project
from tests.support.detect import VENV_BIN
from tests.support.e2e import GOOD_MUL, WRONG_MUL, Project, Result


def wrapped(project: Project, tool: str, command: str) -> Path:
    """``command`` as the lint command, ``tool`` on PATH a wrapper that logs each run."""
    real = shutil.which(tool, path=str(VENV_BIN))
    if real is None:
        pytest.skip(f"{tool} is not installed in this environment")
    marker = project.state_dir / "lint_runs"
    bin_dir = project.state_dir / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / tool
    wrapper.write_text(
        f'#!/bin/sh\nprintf "%s\\t%s\\n" "$(pwd)" "$*" >> "{marker}"\nexec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    config = project.root / "stepkit.toml"
    text = config.read_text()
    lint = next(line for line in text.splitlines() if line.startswith("lint = "))
    config.write_text(text.replace(lint, f'lint = "{command}"'))
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "lint with a tool")
    return marker


def lint_runs(project: Project, marker: Path) -> list[str]:
    """The arguments of each lint run in the project itself (not the start's copy)."""
    root = str(project.root.resolve())
    lines = marker.read_text().splitlines() if marker.exists() else []
    return [args for where, _, args in (line.partition("\t") for line in lines) if where == root]


def run_two_rounds(project: Project, *first_writes: dict[str, str]) -> Result:
    """Round one adds a failing test's fix wrongly (the tests gate fails), round two fixes it."""
    writes = {"calc.py": WRONG_MUL, "tests/unit/test_mul.py": TEST_MUL}
    for extra in first_writes:
        writes.update(extra)
    project.coder_actions(
        {"write": writes, "sentinel": "CODER_COMPLETE"},
        {"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"},
    )
    env = project.env(PATH=f"{project.state_dir / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = project.run(env=env)
    assert result.code == 5, result.stdout + result.stderr  # at the final approval
    assert project.coder_calls() == 2
    return result


@pytest.mark.slow
def test_a_fix_round_lints_the_changed_files_and_the_step_proceeds_on_the_whole_lint(tmp_path):
    project = python_project(tmp_path)
    marker = wrapped(project, "ruff", "ruff check")
    result = run_two_rounds(project)
    runs = lint_runs(project, marker)
    # the step's files, and check.py, which the last lint failed on (a pre-existing failure)
    narrowed = "check --force-exclude calc.py check.py tests/unit/test_mul.py"
    # the first round whole; the fix round on those files; then whole before proceeding
    assert runs == ["check", narrowed, "check"], runs
    lint = next(g for g in result.data["gates"] if g["name"] == "lint")
    assert lint["status"] == "pass" and lint["command"] == "ruff check", lint


@pytest.mark.slow
def test_a_change_to_the_linters_configuration_lints_whole(tmp_path):
    project = python_project(tmp_path)
    marker = wrapped(project, "ruff", "ruff check")
    run_two_rounds(project, {"ruff.toml": "line-length = 120\n"})
    assert set(lint_runs(project, marker)) == {"check"}, lint_runs(project, marker)


@pytest.mark.slow
def test_a_cross_file_checker_is_never_narrowed(tmp_path):
    project = python_project(tmp_path)
    marker = wrapped(project, "mypy", "mypy calc.py tests")
    run_two_rounds(project)
    runs = lint_runs(project, marker)
    assert len(runs) >= 2 and set(runs) == {"calc.py tests"}, runs
