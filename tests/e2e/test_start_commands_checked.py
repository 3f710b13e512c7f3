"""A gate command that cannot start on this machine ends the run before the
coder is called (:mod:`stepkit.workspace.precheck`): the real CLI, a real git
project, a command coder that counts its calls (tests/support/e2e.py).  The
reason names the gate, why, and the ``stepkit.toml`` line that fixes it."""

from __future__ import annotations

import pytest

from tests.support.e2e import PY, make_project


def _with_command(tmp_path, key: str, command: str):
    project = make_project(tmp_path)
    config = project.root / "stepkit.toml"
    lines = [
        f'{key} = "{command}"' if line.startswith(f"{key} = ") else line
        for line in config.read_text().splitlines()
    ]
    config.write_text("\n".join(lines) + "\n")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "the command")
    return project


def test_a_tests_command_naming_a_missing_tool_ends_the_run_before_the_coder(tmp_path):
    project = _with_command(tmp_path, "test", "nosuchtool-stepkit -q tests")
    result = project.run()
    assert result.outcome == "STEP_FAILED", result.stdout + result.stderr
    assert project.coder_calls() == 0
    reason = result.output
    assert "Environment fault: tests:" in reason, reason
    assert "`nosuchtool-stepkit` (of `nosuchtool-stepkit -q tests`) is not on the gates' PATH" in (
        reason
    )
    assert "[commands] in stepkit.toml" in reason and 'test = "…"' in reason
    assert "before the coder was called" in reason


def test_a_build_script_that_is_not_there_ends_the_run_before_the_coder(tmp_path):
    # a variant: a program named by its path in the project, not looked up on PATH
    project = _with_command(tmp_path, "build", "./scripts/build.sh --release")
    result = project.run()
    assert result.outcome == "STEP_FAILED", result.stdout + result.stderr
    assert project.coder_calls() == 0
    assert "Environment fault: build:" in result.output
    assert "`./scripts/build.sh` (of `./scripts/build.sh --release`) is not a file" in (
        result.output
    )
    assert 'build = "…"' in result.output


@pytest.mark.slow
def test_commands_that_can_start_reach_the_coder(tmp_path):
    project = _with_command(tmp_path, "test", f"{PY} -B check.py")
    result = project.run()
    assert result.code == 5, result.stdout + result.stderr  # the final approval
    assert project.coder_calls() == 1
