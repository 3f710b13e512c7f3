"""A project with no tests yet: the step that adds its first test modules
is judged on them.  The pristine re-check (the earlier tests again, without
the modules the step added) has no earlier test to run; that is no failure
of the step's, unlike a copy where earlier tests exist and stop running."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_hostile_coder import GOOD_MUL, PYPROJECT, PYTEST, TEST_MUL, gate_of_tests
from tests.support.e2e import PY, make_project

pytestmark = pytest.mark.slow


def untested_project(tmp_path: Path, test_file: str):
    """A Python project with a pytest tests gate and no test at all; the plan
    names the test module the step adds."""
    project = make_project(tmp_path)
    config = project.root / "stepkit.toml"
    config.write_text(config.read_text().replace(f'test = "{PY} check.py"', f'test = "{PYTEST}"'))
    (project.root / "check.py").unlink()
    (project.root / "pyproject.toml").write_text(PYPROJECT)
    step = project.plans / "steps" / "01-mul.md"
    step.write_text(
        step.read_text().replace(
            "## Tasks\n", f"## Tasks\n- Add the first tests in `{test_file}`.\n"
        )
    )
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "no tests yet")
    return project


@pytest.mark.parametrize("test_file", ["tests/unit/test_mul.py", "test_mul.py"])
def test_a_step_that_adds_the_first_test_module_is_judged_on_it(tmp_path, test_file):
    project = untested_project(tmp_path, test_file)
    project.coder_actions(
        {"write": {"calc.py": GOOD_MUL, test_file: TEST_MUL}, "sentinel": "CODER_COMPLETE"}
    )
    result = project.run()
    assert result.outcome == "PAUSED", result.stdout + result.stderr
    gate = gate_of_tests(result.data)
    assert gate["status"] == "pass", gate
    assert "pristine re-check" in gate["evidence"] and "PASS" in gate["evidence"]
