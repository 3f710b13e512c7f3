"""``stepkit init`` writes what it proved (:mod:`stepkit.cli.init_commands`):
each detected gate command runs once on the project's HEAD in a scratch copy,
and ``stepkit.toml [commands]`` gets the ones that ran, commented with where
they came from and how they did; one that could not run is written commented
out with why.  Real git projects, real pytest, the real CLI."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

import pytest

from tests.e2e.test_init_cli import stepkit
from tests.support.gitrepo import git, init_repo

TESTS = "def test_one():\n    assert 1\n\n\ndef test_two():\n    assert 2\n"


def ci_project(root: Path, run: str) -> Path:
    """A committed Python project with one passing test file, whose CI runs ``run``."""
    files = {
        "pyproject.toml": '[project]\nname = "lib"\nversion = "0"\n',
        "tests/test_a.py": TESTS,
        ".github/workflows/ci.yml": (
            "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
            f"      - uses: actions/checkout@v4\n      - run: {run}\n"
        ),
    }
    return init_repo(root, files)


def _this_python_first(monkeypatch) -> None:
    # `python` on the gates' PATH is the interpreter running the suite, which has pytest
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    )


@pytest.mark.slow
def test_init_writes_the_tests_command_that_ran_on_head_with_its_source(tmp_path, monkeypatch):
    _this_python_first(monkeypatch)
    project = ci_project(tmp_path, "python -m pytest -q")
    done = stepkit("init", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "tests   pass: 2 passed" in done.stdout  # the progress line
    text = (project / "stepkit.toml").read_text()
    assert tomllib.loads(text)["commands"] == {"test": "python -m pytest -q"}
    assert "# test: from .github/workflows/ci.yml:7\n# ran on HEAD: 2 passed\ntest = " in text


def test_a_ci_line_whose_tool_is_missing_is_written_commented_out_with_why(tmp_path):
    project = ci_project(tmp_path, "hatch test")  # no hatch on this machine's PATH
    # no pyproject.toml: CI's line is the only candidate (else the next takes its place, below)
    git(project, "rm", "-q", "pyproject.toml")
    git(project, "commit", "-qm", "ci only")
    done = stepkit("init", cwd=project)
    assert done.returncode == 0, done.stderr
    text = (project / "stepkit.toml").read_text()
    # switched off, not left to detection: a run would stop on the same command before its coder
    assert tomllib.loads(text)["commands"] == {"test": ""}
    assert (
        "# test: no candidate could run on HEAD:\n"
        "#   `hatch test`: hatch: command not found (not installed or not on PATH)\n"
        '# test = "hatch test"\n'
        'test = ""  # NOT RUN until set\n'
    ) in text
    assert "could not run there: written commented out" in done.stdout


@pytest.mark.slow
def test_init_never_writes_over_a_commands_table_without_force(tmp_path, monkeypatch):
    _this_python_first(monkeypatch)
    project = ci_project(tmp_path, "python -m pytest -q")
    mine = '[commands]\ntest = "python -m pytest -x"\n'
    (project / "stepkit.toml").write_text(mine)
    done = stepkit("init", cwd=project)
    assert done.returncode == 0, done.stderr  # the plan repo is written; the table kept
    assert "Kept the [commands] table" in done.stdout and "--force" in done.stdout
    assert (project / "stepkit.toml").read_text() == mine
    assert (project / "plans").is_dir()
    forced = stepkit("init", "--force", cwd=project)
    assert forced.returncode == 0, forced.stderr
    assert "ran on HEAD: 2 passed" in (project / "stepkit.toml").read_text()


@pytest.mark.slow
def test_a_second_init_says_every_gate_it_proved_earlier(tmp_path, monkeypatch):
    """Proved once, cached by the files: the second init's progress still has a line per gate."""
    _this_python_first(monkeypatch)
    project = ci_project(tmp_path, "python -m pytest -q")
    assert stepkit("init", cwd=project).returncode == 0
    again = stepkit("init", "--force", cwd=project)
    assert again.returncode == 0, again.stderr
    assert "tests   pass: 2 passed (measured earlier on the same files)" in again.stdout


@pytest.mark.slow
def test_a_ci_line_that_cannot_run_gives_its_place_to_the_next_candidate(tmp_path, monkeypatch):
    # CI runs hatch, which this machine lacks; the Python plugin's pytest runs here
    _this_python_first(monkeypatch)
    project = ci_project(tmp_path, "hatch test")
    done = stepkit("init", cwd=project)
    assert done.returncode == 0, done.stderr
    text = (project / "stepkit.toml").read_text()
    command = tomllib.loads(text)["commands"]["test"]
    assert command.startswith("python -m pytest"), text
    assert (
        "# passed over `hatch test`: it could not run: "
        "hatch: command not found (not installed or not on PATH)\n"
        "# test: chosen by stepkit.plugins.projects.python\n"
        "# ran on HEAD: 2 passed\n"
    ) in text


@pytest.mark.slow
def test_a_format_command_naming_the_steps_files_is_proven_on_the_files_of_head(
    tmp_path, monkeypatch
):
    _this_python_first(monkeypatch)
    project = ci_project(tmp_path, "python -m pytest -q")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "lib"\nversion = "0"\n\n[tool.stepkit.commands]\n'
        'format = "python -m ruff format --check {files:.py}"\n'
    )
    git(project, "commit", "-qam", "f")
    done = stepkit("init", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "format  pass" in done.stdout, done.stdout
