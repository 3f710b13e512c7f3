"""The acceptance-criteria map: rendered from the final tests gate, checked
for criteria without an entry and cited tests that did not pass."""

from __future__ import annotations

from stepkit.protocol.criteria import (
    criteria_problems,
    criteria_rows,
    plan_criteria,
    render_criteria,
)
from stepkit.records import GateResult
from stepkit.workspace.testresults import TestResults

PLAN = """---
step: 1
---

## Acceptance criteria
- `mul(2, 3) == 6`.
- Negative numbers
  work too.
- The docs say so.

## Edge cases
- none
"""


def _tests_gate(tmp_path, outcomes, flaky=(), pre=()):
    results = TestResults(source="junit XML", outcomes=outcomes)
    return GateResult(name="tests", status="pass", command="pytest", tests=results.record(tmp_path / "t.json"),
                      flaky=list(flaky), preexisting_failures=list(pre))


def test_the_plan_bullets_continuation_lines_joined():
    assert plan_criteria(PLAN) == ["`mul(2, 3) == 6`.", "Negative numbers work too.", "The docs say so."]


def test_rows_and_problems(tmp_path):
    gate = _tests_gate(tmp_path, {"t.py::test_mul": "passed", "t.py::test_neg": "failed", "t.py::test_f": "passed"},
                       flaky=["t.py::test_f"])
    criteria = plan_criteria(PLAN)
    entries = [{"criterion": "`mul(2, 3) == 6`", "tests": ["test_mul"]},
               {"criterion": "Negative numbers work too.", "tests": ["t.py::test_neg", "t.py::test_f", "t.py::gone"]},
               {"criterion": "Something else", "tests": []}]
    rows = criteria_rows(criteria, entries, gate)
    assert rows[0] == "`mul(2, 3) == 6`. — `t.py::test_mul`: passed"
    assert "`t.py::test_neg`: FAILED" in rows[1] and "`t.py::test_f`: FLAKY" in rows[1]
    assert "`t.py::gone`: DID NOT RUN" in rows[1]
    assert rows[2] == "The docs say so. — NO ENTRY in the handoff's criteria map"
    problems = criteria_problems(criteria, entries, gate)
    assert len(problems) == 5
    assert any("cites test 't.py::test_neg', which did not pass" in p for p in problems)
    assert any("cites test 't.py::test_f', which did not pass" in p and "FLAKY" in p for p in problems)
    assert any("'t.py::gone', which did not run" in p for p in problems)
    assert any("'The docs say so.' has no entry" in p for p in problems)
    assert any("'Something else', which is not a bullet" in p for p in problems)
    assert render_criteria(criteria, entries, gate).startswith("### Acceptance criteria → tests")


def test_not_covered_is_allowed_and_a_test_gate_that_did_not_run_runs_nothing(tmp_path):
    criteria = ["The docs say so."]
    entries = [{"criterion": "The docs say so.", "tests": []}]
    assert criteria_problems(criteria, entries, None) == []
    assert criteria_rows(criteria, entries, None) == ["The docs say so. — not covered by a test"]
    not_run = GateResult(name="tests", status="not_run")
    problems = criteria_problems(criteria, [{"criterion": "The docs say so.", "tests": ["t.py::a"]}], not_run)
    assert problems == [("acceptance criterion 'The docs say so.' cites test 't.py::a', which did not run in "
                         "the final tests gate")]


def test_a_handoff_calling_a_suite_with_preexisting_failures_passing_is_rejected():
    from stepkit.protocol.handoff.check import check_handoff_text
    from stepkit.protocol.handoff.render import render_handoff

    gate = GateResult(name="tests", status="pass", command="pytest", exit_code=1, summary="0 new failures",
                      preexisting_failures=["t.py::old"])
    prose = {"summary": "All tests pass.", "completed": "- mul", "not_completed": "None", "deviations": "None",
             "downstream_plan_updates": "None", "edge_cases_discovered": "None", "notes_for_next_step": "None"}
    text = render_handoff(1, "Mul", "complete", prose, [gate])
    problems = check_handoff_text(text, [gate])
    assert any("the tests gate did not pass (its failures are PRE-EXISTING" in p for p in problems)
    honest = render_handoff(1, "Mul", "complete", {**prose, "summary": "Added mul."}, [gate])
    assert check_handoff_text(honest, [gate]) == []


def test_outside_its_run_a_handoff_is_checked_by_the_map_stepkit_rendered(tmp_path):
    from stepkit.protocol.handoff.check import check_handoff_text
    from stepkit.protocol.handoff.render import render_handoff

    gate = _tests_gate(tmp_path, {"t.py::test_mul": "passed", "t.py::test_neg": "failed"})
    prose = {"summary": "Added mul.", "completed": "- mul", "not_completed": "None", "deviations": "None",
             "downstream_plan_updates": "None", "edge_cases_discovered": "None", "notes_for_next_step": "None"}
    criteria = plan_criteria(PLAN)
    entries = [{"criterion": criteria[0], "tests": ["t.py::test_mul"]},
               {"criterion": criteria[1], "tests": ["t.py::test_neg"]},
               {"criterion": criteria[2], "tests": []}]
    text = render_handoff(1, "Mul", "partial", prose, [gate], criteria=render_criteria(criteria, entries, gate))
    assert check_handoff_text(text) == [
        ("acceptance criterion 'Negative numbers work too.' cites test 't.py::test_neg', which did not pass in "
         "the final tests gate (FAILED)")]
