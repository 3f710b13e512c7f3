"""End to end: a command coder's sentinel is a line that starts with it, a
reason may follow, and the last sentinel decides, whatever the exit code or
the text after it says.  Real ``stepkit run``, real git project, a real
command coder (tests/support/e2e.py)."""

from __future__ import annotations

import pytest

from tests.support.e2e import GOOD_MUL

# whole-step runs over several variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "said, reason",
    [
        ("CODER_FAILED: tests still red", "tests still red"),
        ("**CODER_FAILED**: the lint is red\nbut all is well otherwise", "the lint is red"),
        ("CODER_COMPLETE\nthen the suite broke:\nCODER_FAILED - suite broke", "suite broke"),
    ],
)
def test_coder_failed_with_a_reason_and_exit_0_fails_the_step_with_that_reason(
    project, said, reason
):
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": said, "exit": 0})
    result = project.run()
    assert result.code == 1 and result.outcome == "STEP_FAILED", result.stdout + result.stderr
    assert f"Reason: the coder failed: {reason}" in result.output
    assert project.coder_calls() == 1
    assert project.plan_status(1) != "complete"


def test_coder_rejected_with_a_reason_rejects_the_step(project):
    project.coder_actions({"sentinel": "CODER_REJECTED - out of scope", "exit": 0})
    result = project.run()
    assert result.code == 4 and result.outcome == "STEP_REJECTED", result.stdout + result.stderr
    assert "Rejected at: the coder: out of scope" in result.output
