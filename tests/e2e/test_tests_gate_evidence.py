"""A tests gate passes only on evidence that tests ran, whatever chose its
command: a linter forced as the tests command (``stepkit.toml``) exits 0
and prints its all-clear, and the step records the gate NOT RUN, never a
pass — the same gate runner as ``stepkit verify``
(tests/unit/test_verdicts_no_test_run.py)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from tests.support.e2e import PY, make_project

RUFF = shlex.quote(str(Path(sys.executable).with_name("ruff")))
NO_RUNNER = "no test runner's summary or report in its output"


def test_a_linter_forced_as_the_tests_command_is_not_run_in_a_step(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(
            f'test = "{PY} check.py"', f'test = "{RUFF} check --isolated --select F ."'
        )
    )
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lint as tests")

    result = project.run()

    tests = next(g for g in result.data["gates"] if g["name"] == "tests")
    assert tests["command"] == f"{RUFF} check --isolated --select F .", tests
    assert tests["exit_code"] == 0, tests["evidence"]
    assert tests["status"] == "not_run" and NO_RUNNER in tests["summary"], tests
    assert "the command ran no test" in tests["summary"]
    assert project.coder_calls() == 1  # NOT RUN is no failure: no fix attempt either
    handoff = Path(result.data["handoff_draft"]).read_text().split("### tests", 1)[1]
    assert handoff.startswith(" — NOT RUN")
