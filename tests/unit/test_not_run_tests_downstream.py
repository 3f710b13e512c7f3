"""A tests gate whose command ran no test, downstream of the gate runner:
the handoff's Evidence marks it NOT RUN with the reason, check_handoff
refuses a summary that calls it passed, the displays say NOT RUN, and the
step goes on as PROTOCOL says for NOT RUN (its route is ``pass``, never the
fix loop)."""

from __future__ import annotations

from stepkit.protocol.handoff.check import check_handoff_text
from stepkit.protocol.handoff.render import render_handoff
from stepkit.records import GateResult
from stepkit.workspace.stall import failure_signature

NO_TEST = "the command ran no test. This is NOT evidence that tests passed"
TESTS = GateResult(
    name="tests",
    status="not_run",
    command="pytest -q",
    exit_code=5,
    summary=f"pytest: no tests collected (exit 5); {NO_TEST}",
    evidence=f"$ pytest -q\nexit code: 5\nNOT RUN: pytest: no tests collected (exit 5): {NO_TEST}",
)
GATES = [GateResult(name="build", status="pass", command="make", exit_code=0), TESTS]


def handoff(summary: str) -> str:
    return render_handoff(
        step=1, title="One", result="complete", prose={"summary": summary}, gates=GATES
    )


def test_the_evidence_marks_it_not_run_with_the_reason_and_the_command():
    text = handoff("Did the step.")
    block = text.split("### tests", 1)[1]
    assert block.startswith(" — NOT RUN")
    assert (
        "pytest: no tests collected (exit 5)" in block
        and NO_TEST in block
        and "$ pytest -q" in block
    )
    assert check_handoff_text(text, GATES) == []


def test_check_handoff_refuses_a_summary_that_says_the_tests_passed():
    problems = check_handoff_text(handoff("All tests passed."), GATES)
    assert any(
        "the tests gate did not run but the handoff says it passed" in p for p in problems
    ), problems


def test_displays_say_not_run_with_the_command_and_the_whole_reason():
    line = TESTS.status_line()
    assert line.startswith("tests: NOT RUN (`pytest -q`, exit 5, ")
    assert line.endswith(NO_TEST)
    assert not TESTS.failed and not TESTS.ran and failure_signature(TESTS) == ""


def test_a_not_run_tests_gate_goes_on_and_never_reaches_the_fix_loop():
    from stepkit.protocol.nodes.verify import _gate_route

    assert _gate_route(TESTS, {}).route == "pass"
    error = TESTS.model_copy(
        update={"status": "error", "summary": "uv: failed to spawn pytest (not installed)"}
    )
    outcome = _gate_route(error, {})
    assert outcome.route == "error"
    assert outcome.updates["failure_reason"].startswith(
        "Environment fault: tests: uv: failed to spawn pytest (not installed). "
    )
    assert "TEST_CMD" in outcome.updates["failure_reason"]
