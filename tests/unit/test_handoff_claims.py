"""A handoff's claims against the recorded gates, its Evidence against what
stepkit rendered, and one rule for ``result`` in check-handoff and status."""

import json

import pytest

from stepkit.protocol.handoff.check import check_handoff_text
from stepkit.protocol.handoff.render import HANDOFF_SECTIONS, render_handoff
from stepkit.records import GateResult
from tests.support.cli import stepkit

GATES = [
    GateResult(name="format", status="not_run"),
    GateResult(name="lint", status="fail", command="ruff check .", exit_code=1, evidence="E1 bad"),
    GateResult(name="build", status="pass", command="make", exit_code=0),
    GateResult(name="tests", status="not_run"),
]


def handoff(summary="Did the step.", gates=GATES, result="partial"):
    return render_handoff(
        step=1, title="One", result=result, prose={"summary": summary}, gates=gates
    )


def claims(problems):
    return [p for p in problems if "says it passed" in p]


@pytest.mark.parametrize(
    "sentence, gate",
    [
        ("All tests passed, no regressions.", "tests"),
        ("The test suite is green and nothing regressed.", "tests"),
        ("Checked all 40 tests without trouble.", "tests"),
        ("Tests: no failures.", "tests"),
        ("Lint is OK now.", "lint"),
        ("The linter succeeded, no warnings left.", "lint"),
        ("Formatting is clean.", "format"),
    ],
)
def test_a_sentence_that_says_a_gate_passed_when_it_did_not_is_reported(sentence, gate):
    problems = claims(check_handoff_text(handoff(summary=f"Added mul. {sentence} Done."), GATES))
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"the {gate} gate ")
    assert problems[0].endswith(sentence)


def test_every_such_sentence_is_reported_not_only_the_first():
    summary = "All tests pass.\n\n- Tests are green.\n- The lint passed, no regressions."
    problems = claims(check_handoff_text(handoff(summary=summary), GATES))
    assert [p.rsplit(": ", 1)[1] for p in problems] == [
        "All tests pass.",
        "Tests are green.",
        "The lint passed, no regressions.",
    ]
    assert "did not run" in problems[0] and "did not pass (fail)" in problems[2]


@pytest.mark.parametrize(
    "sentence",
    [
        "The tests did not run, so nothing says they passed.",
        "The tests were not run, so they could not have passed.",
        "Lint did not pass.",
        "Step 2 must make the tests pass.",
        "The build passed.",  # it did
        "The build passed, the tests did not run.",  # the clause that says passed is about the build
        "Lint: 3 passed, 1 failed.",
        "All 12 tests failed to start.",
    ],
)
def test_negated_counted_wished_or_true_statements_are_not_claims(sentence):
    assert claims(check_handoff_text(handoff(summary=sentence), GATES)) == []


def test_stepkit_s_own_evidence_is_no_claim_even_when_it_says_passed():
    gates = [
        *GATES[:3],
        GateResult(
            name="tests",
            status="fail",
            command="pytest -q",
            exit_code=1,
            summary="3 tests passed, 1 failed",
            evidence="FAILED t::x",
        ),
    ]
    assert check_handoff_text(handoff(gates=gates, result="partial"), gates) == []


def test_an_evidence_section_stepkit_did_not_render_is_a_problem():
    text = handoff().replace("E1 bad", "all fixed")
    assert check_handoff_text(text, GATES) == [
        "the Evidence section is not the one stepkit rendered: it was changed after rendering"
    ]
    hand_written = "---\nstep: 1\ntitle: One\nresult: complete\n---\n" + "".join(
        f"\n## {name}\n\n{'$ make' + chr(10) + 'exit code: 0' if name == 'Evidence' else 'None'}\n"
        for name in HANDOFF_SECTIONS
    )
    build_only = [GateResult(name="build", status="pass", command="make", exit_code=0)]
    assert check_handoff_text(hand_written, build_only) == [
        "the Evidence section was not rendered by stepkit (its stepkit-evidence marker is missing)"
    ]
    assert check_handoff_text(
        hand_written, []
    ) == [  # outside a run too: only stepkit writes Evidence
        "the Evidence section was not rendered by stepkit (its stepkit-evidence marker is missing)"
    ]


def test_outside_a_run_a_rendered_evidence_tells_which_gates_did_not_pass():
    problems = check_handoff_text(handoff(summary="The linter is happy: lint passed."), [])
    assert problems == [
        (
            "the lint gate did not pass (fail) but the handoff says it passed: "
            "The linter is happy: lint passed."
        )
    ]


def test_check_handoff_catches_an_edited_evidence_and_a_false_claim(tmp_path):
    path = tmp_path / "01-one.md"
    path.write_text(
        handoff(summary="All tests passed, no regressions.").replace("exit code: 1", "exit code: 0")
    )
    done = stepkit("check-handoff", str(path), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "the Evidence section is not the one stepkit rendered: it was changed after rendering",
        "the tests gate did not run but the handoff says it passed: All tests passed, no regressions.",
    ]


def test_result_is_compared_the_same_way_by_check_handoff_and_status(tmp_path):
    steps, handoffs = tmp_path / "plans" / "steps", tmp_path / "plans" / "handoffs"
    steps.mkdir(parents=True)
    handoffs.mkdir()
    (steps / "01-one.md").write_text("---\ntitle: One\nstatus: complete\n---\n")
    (steps / "02-two.md").write_text("---\ntitle: Two\ndepends_on: [1]\n---\n")
    (handoffs / "01-one.md").write_text(
        handoff(result="complete").replace("result: complete", "result: Complete")
    )

    checked = stepkit("check-handoff", str(handoffs / "01-one.md"), cwd=tmp_path)
    status = json.loads(stepkit("status", "--json", cwd=tmp_path).stdout)

    assert checked.returncode == 1
    assert (
        "frontmatter result is 'Complete'; expected complete, partial or blocked" in checked.stdout
    )
    two = status["steps"][1]
    assert two["deps_satisfied"] is False
    assert two["unsatisfied"] == ["step 1 (One): result is Complete"]
    assert status["steps"][0]["handoff_result"] == "Complete"
    assert any("01-one.md: result 'Complete'" in p for p in status["problems"])


NOT_RUN_TESTS = [
    GateResult(name="format", status="not_run"),
    GateResult(name="lint", status="pass", command="ruff check .", exit_code=0),
    GateResult(name="build", status="pass", command="make", exit_code=0),
    GateResult(name="tests", status="not_run"),
]


@pytest.mark.parametrize(
    "sentence",
    [
        "The full test suite passed without any failures.",
        "The tests passed without errors.",
        "12/12 tests passed.",
        "57 passed in 0.3s.",
        "The suite is green (57/57 OK).",
        "Ran the whole suite: all 30 green.",
        "The test run completed successfully with no failed tests.",
    ],
)
def test_with_tests_not_run_any_claim_of_a_test_outcome_is_a_problem(sentence):
    problems = claims(
        check_handoff_text(
            handoff(summary=f"Added mul. {sentence}", gates=NOT_RUN_TESTS), NOT_RUN_TESTS
        )
    )
    assert [p.split(":")[0] for p in problems] == [
        "the tests gate did not run but the handoff says it passed"
    ]


def test_a_claim_that_wraps_across_lines_is_judged_as_one_sentence():
    summary = "Added mul and its test. The whole test\nsuite passed without a single\nfailure."
    problems = claims(
        check_handoff_text(handoff(summary=summary, gates=NOT_RUN_TESTS), NOT_RUN_TESTS)
    )
    assert len(problems) == 1 and "suite passed" in problems[0]


@pytest.mark.parametrize(
    "sentence",
    [
        "The build passed without errors.",
        "No test ran: the project has no test command yet.",
        "Lint is clean, and the tests did not run.",
    ],
)
def test_true_or_hoped_for_statements_with_tests_not_run_are_not_claims(sentence):
    assert (
        claims(check_handoff_text(handoff(summary=sentence, gates=NOT_RUN_TESTS), NOT_RUN_TESTS))
        == []
    )


def test_hand_written_evidence_is_a_problem_outside_a_run_too():
    text = handoff(result="complete", gates=[]).split("## Evidence", 1)[0] + (
        "## Evidence\n\ntests passed (trust me)\n\n## Notes for next step\n\nNone\n"
    )
    problems = check_handoff_text(text, [])
    assert any("Evidence section was not rendered by stepkit" in p for p in problems), problems
