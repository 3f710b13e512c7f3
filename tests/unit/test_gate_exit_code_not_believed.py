"""A tests gate whose run reports a failure fails, whatever its exit code:
the code under test runs inside the test process and can end it with
status 0 after the runner reported the failure, and rewrite the report the
runner wrote; what the runner printed while the tests ran is believed too.
Real pytest runs in a tmp dir, through the real gate runner."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stepkit.workspace.gates import run_gate
from tests.support.evidence_logs import evidence_pm

PASSING = "def test_add():\n    assert 2 + 3 == 5\n"
FAILING = "def test_add():\n    assert 2 - 3 == 5\n"
EXIT_ZERO = "\nimport atexit\nimport os\n\natexit.register(os._exit, 0)\n"
#: rewrites the junit report without its failures, after pytest wrote it
FORGE = """
import atexit, os, re, shlex

def _forge():
    for word in shlex.split(os.environ.get("PYTEST_ADDOPTS", "")):
        if word.startswith("--junitxml="):
            path = word.split("=", 1)[1]
            text = re.sub(r"<failure.*?</failure>", "", open(path).read(), flags=re.S)
            open(path, "w").write(re.sub(r'failures="\\\\d+"', 'failures="0"', text))
    os._exit(0)

atexit.register(_forge)
"""


def run_tests_gate(tmp_path: Path, test_file: str):
    (tmp_path / "test_calc.py").write_text(test_file)
    return run_gate(
        "tests",
        f"{sys.executable} -m pytest -q -p no:cacheprovider test_calc.py",
        "t",
        tmp_path,
        tmp_path / "logs",
        60,
        60,
        evidence_pm(),
    )


@pytest.mark.parametrize(
    "forged", [EXIT_ZERO, FORGE], ids=["exit status 0", "the report rewritten too"]
)
def test_a_failure_the_run_reported_fails_the_gate_though_it_exits_0(tmp_path, forged):
    gate = run_tests_gate(tmp_path, FAILING + forged)
    assert gate.exit_code == 0
    assert gate.status == "fail", gate.summary
    assert gate.summary.startswith("exit code 0, yet the run reported 1 failing test: "), (
        gate.summary
    )
    assert gate.tests is not None and gate.tests.failing == ["test_calc.py::test_add"]


def test_a_passing_run_that_exits_0_still_passes(tmp_path):
    gate = run_tests_gate(tmp_path, PASSING + EXIT_ZERO)
    assert (gate.status, gate.exit_code) == ("pass", 0), gate.summary
