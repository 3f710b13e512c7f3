"""``stepkit init`` asks on a terminal about a gate none of whose candidates
could run on HEAD (:func:`stepkit.cli.init.ask_gate`): the user picks one
to keep, or types a command, which is proven like the others.  A real git
project, the real CLI on a pseudo-terminal; without a terminal it never asks
(tests/e2e/test_init_proves.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.e2e.test_init_proves import ci_project
from tests.support.terminal import on_terminal

QUESTION = b"Enter leaves the gate off (NOT RUN): "


def _ci_only(root: Path) -> Path:
    """CI runs hatch (not on this machine), and nothing else offers a tests command."""
    project = ci_project(root, "hatch test")
    for args in (["rm", "-q", "pyproject.toml"], ["commit", "-qm", "ci only"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project, check=True
        )
    return project


def _init_on_terminal(project: Path, answer: bytes) -> tuple[int, str]:
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
    }
    return on_terminal(["init"], project, env, QUESTION, answer)


@pytest.mark.slow
def test_a_command_typed_at_the_question_is_proven_and_written(tmp_path):
    project = _ci_only(tmp_path)
    code, screen = _init_on_terminal(project, b"python -m pytest -q\n")
    assert code == 0, screen
    assert "No command for the tests gate could run on HEAD:" in screen
    assert "1. hatch test" in screen
    text = (project / "stepkit.toml").read_text()
    assert tomllib.loads(text)["commands"] == {"test": "python -m pytest -q"}, text
    assert (
        "# passed over `hatch test`: it could not run: hatch: command not found "
        "(not installed or not on PATH)\n# test: chosen by you at init\n# ran on HEAD: 2 passed\n"
    ) in text


def test_a_candidate_picked_by_number_is_kept_though_it_could_not_run(tmp_path):
    project = _ci_only(tmp_path)
    code, screen = _init_on_terminal(project, b"1\n")
    assert code == 0, screen
    text = (project / "stepkit.toml").read_text()
    assert tomllib.loads(text)["commands"] == {"test": "hatch test"}, text
    assert "# kept by you at init, though it could not run on HEAD\n" in text
