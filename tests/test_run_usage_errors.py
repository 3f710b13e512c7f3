"""Bad specs are usage errors before any run starts: exit 2, one line, nothing changed."""

from __future__ import annotations

import pytest

from tests.e2e_support import make_project


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path)


def assert_no_run(project, result, message):
    assert result.code == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [f"stepkit: error: {message}"]
    assert not (project.root / ".stepkit" / "runs").is_dir() or not any((project.root / ".stepkit" / "runs").iterdir())
    assert project.plan_status(1) == "pending"


def test_unknown_engine(project):
    result = project.stepkit("run", "--project-dir", str(project.root), "--engine", "nope", json_out=False)
    assert_no_run(project, result, "unknown engine 'nope': use anthropic[:MODEL] or scripted:FILE")


def test_missing_scripted_answers_file(project):
    result = project.stepkit("run", "--project-dir", str(project.root), "--engine", "scripted:nowhere.yaml",
                             json_out=False)
    assert_no_run(project, result, "scripted engine: cannot read nowhere.yaml: No such file or directory")


def test_preset_coder_that_is_not_installed(project):
    env = project.env(PATH="/nonexistent")
    result = project.run("--coder", "aider", env=env, json_out=False)
    assert_no_run(project, result, "--coder aider: the 'aider' CLI is not on PATH (install it, or use command:SHELL)")


def test_empty_command_reviewer(project):
    result = project.run("--reviewer", "command:", json_out=False)
    assert_no_run(project, result, "--reviewer command:SHELL needs a command after 'command:'")


def test_a_coder_no_plugin_owns_fails_naming_it(project):
    result = project.run("--coder", "mycoder")
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "no plugin answered stepkit_implement for coder 'mycoder'" in result.output
    assert "Reason: unknown" not in result.output
