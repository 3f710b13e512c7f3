"""End to end: a gate that hits an environment fault ends the run at once,
and a tests gate that ran no test is NOT RUN all the way to STEP_COMPLETE.

Real CLI, real git project, real gate commands (make, pytest), the command
coder script of tests/support/e2e.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stepkit.cli import main
from tests.support.detect import CMAKE_TESTS_BEHIND_AN_OPTION
from tests.support.e2e import PY

NO_TEST = "the command ran no test. This is NOT evidence that tests passed"


@pytest.mark.slow
def test_a_build_gate_hitting_a_missing_tool_through_make_ends_the_run_without_a_fix_attempt(
    project,
):
    if shutil.which("make") is None:
        pytest.skip("make is not installed on this machine")
    (project.root / "Makefile").write_text("build:\n\tno-such-compiler-9d2 calc.py\n")
    result = project.run(env=project.env(BUILD_CMD="make build", PATH="/usr/bin:/bin"))
    assert result.code == 1 and result.outcome == "STEP_FAILED", result.stderr + result.output
    cause = "make: no-such-compiler-9d2: command not found (not installed or not on PATH)"
    # the Makefile is the step's start too, where the same command could not run either
    assert (
        "Reason: Environment fault: build: this command cannot run here (it could not run on "
        f"the step's start either): {cause}; set the build command" in result.output
    )
    assert "no fix attempt was spent" in result.output and "BUILD_CMD" in result.output
    assert "Fix attempts: 0 of 2" in result.output
    assert project.coder_calls() == 1
    gates = {g["name"]: g for g in result.data["gates"]}
    assert (gates["build"]["status"], gates["build"]["exit_code"]) == ("error", 2)
    assert "tests" not in gates  # the run ended before the tests gate
    assert ("verify_build", "end_failure", "error") in project.edges


@pytest.mark.slow
def test_a_tests_gate_that_ran_no_test_is_not_run_up_to_step_complete(project):
    # pytest finds no test in this project: exit 5
    test_cmd = f"{PY} -m pytest -q -p no:cacheprovider"
    paused = project.run(env=project.env(TEST_CMD=test_cmd))
    assert paused.code == 5 and paused.data["pending"]["node"] == "gate_user_review", (
        paused.stderr + paused.output
    )
    question = paused.data["pending"]["question"]
    assert f"tests: NOT RUN (`{test_cmd}`, exit 5" in question and NO_TEST in question

    handoff = Path(paused.data["handoff_draft"]).read_text()
    evidence = handoff.split("## Evidence", 1)[1] if "## Evidence" in handoff else handoff
    assert "### tests — NOT RUN" in evidence and NO_TEST in evidence
    assert "tests — pass" not in evidence.lower()

    done = project.resume("approve", env=project.env(TEST_CMD=test_cmd))
    assert done.code == 0 and done.outcome == "STEP_COMPLETE"
    assert f"- tests: NOT RUN (`{test_cmd}`, exit 5" in done.output and NO_TEST in done.output
    assert "- tests: PASS" not in done.output
    assert {g["name"]: g["status"] for g in done.data["gates"]}["tests"] == "not_run"


def test_verify_of_a_cmake_project_whose_tests_sit_behind_an_option_is_no_false_green(
    tmp_path, capsys
):
    if shutil.which("cmake") is None or shutil.which("ctest") is None:
        pytest.skip("cmake is not installed on this machine")
    (tmp_path / "CMakeLists.txt").write_text(CMAKE_TESTS_BEHIND_AN_OPTION)
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    code = main(["verify", "--project-dir", str(tmp_path), "--json"])
    data = json.loads(capsys.readouterr().out)
    tests = {g["name"]: g for g in data["gates"]}["tests"]
    assert "ctest" in tests["command"]  # the command detection chose
    assert tests["status"] == "not_run" and tests["summary"].startswith(
        "ctest: no tests were found"
    )
    assert NO_TEST in tests["summary"] and NO_TEST in tests["evidence"]
    # DESIGN: a tests gate NOT RUN is no pass, whatever the other gates did
    assert code == 1 and not data["ok"]

    main(["verify", "--project-dir", str(tmp_path)])
    human = capsys.readouterr().out
    verdict = human.splitlines()[-1]
    assert "NOT RUN (not evidence of a pass): " in verdict and verdict.endswith("tests")
