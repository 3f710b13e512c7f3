"""The acceptance-criteria map: rendered from the final tests gate, checked
for criteria without an entry and cited tests that did not pass."""

from __future__ import annotations

from stepkit.protocol.criteria import (
    criteria_problems,
    criteria_rows,
    criterion_index,
    numbered_criteria,
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
    return GateResult(
        name="tests",
        status="pass",
        command="pytest",
        tests=results.record(tmp_path / "t.json"),
        flaky=list(flaky),
        preexisting_failures=list(pre),
    )


def test_the_plan_bullets_continuation_lines_joined():
    assert plan_criteria(PLAN) == [
        "`mul(2, 3) == 6`.",
        "Negative numbers work too.",
        "The docs say so.",
    ]


def test_rows_and_problems(tmp_path):
    gate = _tests_gate(
        tmp_path,
        {"t.py::test_mul": "passed", "t.py::test_neg": "failed", "t.py::test_f": "passed"},
        flaky=["t.py::test_f"],
    )
    criteria = plan_criteria(PLAN)
    entries = [
        {"criterion": "C1", "tests": ["test_mul"]},
        {
            "criterion": "Negative numbers work too.",
            "tests": ["t.py::test_neg", "t.py::test_f", "t.py::gone"],
        },
        {"criterion": "Something else", "tests": []},
    ]
    rows = criteria_rows(criteria, entries, gate)
    assert rows[0] == "C1: `mul(2, 3) == 6`. — `t.py::test_mul`: passed"
    assert "`t.py::test_neg`: FAILED" in rows[1] and "`t.py::test_f`: FLAKY" in rows[1]
    assert "`t.py::gone`: DID NOT RUN" in rows[1]
    assert rows[2] == "C3: The docs say so. — no test cited"
    problems = criteria_problems(criteria, entries, gate)
    assert len(problems) == 4
    assert any(
        "C2 ('Negative numbers work too.') cites test 't.py::test_neg', which did not pass" in p
        for p in problems
    )
    assert any(
        "cites test 't.py::test_f', which did not pass" in p and "FLAKY" in p for p in problems
    )
    assert any("'t.py::gone', which did not run" in p for p in problems)
    assert any(
        "'Something else', which is not one of the plan's Acceptance criteria (cite them by id: C1, C2, C3)"
        in p
        for p in problems
    )
    assert render_criteria(criteria, entries, gate).startswith("### Acceptance criteria → tests")


def test_a_criterion_with_no_entry_is_no_test_cited_not_a_failure(tmp_path):
    gate = _tests_gate(tmp_path, {"t.py::test_mul": "passed"})
    criteria = plan_criteria(PLAN)
    assert criteria_problems(criteria, [], gate) == []
    assert criteria_rows(criteria, [], gate) == [
        "C1: `mul(2, 3) == 6`. — no test cited",
        "C2: Negative numbers work too. — no test cited",
        "C3: The docs say so. — no test cited",
    ]


def test_criteria_are_named_by_id_or_by_their_exact_text_never_by_a_prefix_or_paraphrase():
    criteria = ["`multiply(3, 4) == 12`.", "`multiply` rejects strings.", "multiply"]
    assert [criterion_index(name, criteria) for name in ("C1", "c2", " C3 ")] == [0, 1, 2]
    assert (
        criterion_index("multiply(3, 4) == 12", criteria) == 0
    )  # backticks and the period are markup
    assert criterion_index("`multiply`   rejects\nstrings", criteria) == 1
    assert (
        criterion_index("multiply", criteria) == 2
    )  # the third, exactly; never the first two by prefix
    assert (
        criterion_index("multiply(3, 4) returns 12", criteria) is None
    )  # a paraphrase names nothing
    assert criterion_index("`multiply(3, 4)", criteria) is None
    assert criterion_index("C4", criteria) is None
    assert numbered_criteria(criteria).splitlines()[0] == "C1: `multiply(3, 4) == 12`."


def test_the_writers_schema_takes_this_steps_ids_and_reads_an_exact_text_as_its_id():
    import pydantic
    import pytest

    from stepkit.plugins.llm.strict_schema import strict_json_schema
    from stepkit.plugins.stages.answers import handoff_schema

    schema = handoff_schema(["`mul(2, 3) == 6`.", "Negative numbers work too."])
    sent = strict_json_schema(schema)
    entry = sent["$defs"][
        sent["properties"]["acceptance_criteria"]["items"]["$ref"].rsplit("/", 1)[1]
    ]
    assert entry["properties"]["criterion"]["enum"] == ["C1", "C2"]
    prose = {
        key: "None"
        for key in (
            "step_summary",
            "summary",
            "completed",
            "not_completed",
            "deviations",
            "downstream_plan_updates",
            "edge_cases_discovered",
            "notes_for_next_step",
        )
    }
    answer = schema.model_validate(
        {
            **prose,
            "result": "complete",
            "notes_facts": [],
            "acceptance_criteria": [
                {"criterion": "mul(2, 3) == 6", "tests": []},
                {"criterion": "C2", "tests": ["t.py::test_neg"]},
            ],
        }
    )
    assert [e.criterion for e in answer.acceptance_criteria] == ["C1", "C2"]
    with pytest.raises(pydantic.ValidationError):
        schema.model_validate(
            {
                **prose,
                "result": "complete",
                "notes_facts": [],
                "acceptance_criteria": [{"criterion": "mul", "tests": []}],
            }
        )
    none = handoff_schema([])
    with pytest.raises(pydantic.ValidationError):
        none.model_validate(
            {
                **prose,
                "result": "complete",
                "notes_facts": [],
                "acceptance_criteria": [{"criterion": "C1", "tests": []}],
            }
        )


def test_not_covered_is_allowed_and_a_test_gate_that_did_not_run_runs_nothing(tmp_path):
    criteria = ["The docs say so."]
    entries = [{"criterion": "The docs say so.", "tests": []}]
    assert criteria_problems(criteria, entries, None) == []
    assert criteria_rows(criteria, entries, None) == ["C1: The docs say so. — no test cited"]
    not_run = GateResult(name="tests", status="not_run")
    problems = criteria_problems(criteria, [{"criterion": "C1", "tests": ["t.py::a"]}], not_run)
    assert problems == [
        (
            "acceptance criterion C1 ('The docs say so.') cites test 't.py::a', which did not run in "
            "the final tests gate"
        )
    ]


def test_a_handoff_calling_a_suite_with_preexisting_failures_passing_is_rejected():
    from stepkit.protocol.handoff.check import check_handoff_text
    from stepkit.protocol.handoff.render import render_handoff

    gate = GateResult(
        name="tests",
        status="pass",
        command="pytest",
        exit_code=1,
        summary="0 new failures",
        preexisting_failures=["t.py::old"],
    )
    prose = {
        "summary": "All tests pass.",
        "completed": "- mul",
        "not_completed": "None",
        "deviations": "None",
        "downstream_plan_updates": "None",
        "edge_cases_discovered": "None",
        "notes_for_next_step": "None",
    }
    text = render_handoff(1, "Mul", "complete", prose, [gate])
    problems = check_handoff_text(text, [gate])
    assert any("the tests gate did not pass (its failures are PRE-EXISTING" in p for p in problems)
    honest = render_handoff(1, "Mul", "complete", {**prose, "summary": "Added mul."}, [gate])
    assert check_handoff_text(honest, [gate]) == []


def test_outside_its_run_a_handoff_is_checked_by_the_map_stepkit_rendered(tmp_path):
    from stepkit.protocol.handoff.check import check_handoff_text
    from stepkit.protocol.handoff.render import render_handoff

    gate = _tests_gate(tmp_path, {"t.py::test_mul": "passed", "t.py::test_neg": "failed"})
    prose = {
        "summary": "Added mul.",
        "completed": "- mul",
        "not_completed": "None",
        "deviations": "None",
        "downstream_plan_updates": "None",
        "edge_cases_discovered": "None",
        "notes_for_next_step": "None",
    }
    criteria = plan_criteria(PLAN)
    entries = [
        {"criterion": criteria[0], "tests": ["t.py::test_mul"]},
        {"criterion": criteria[1], "tests": ["t.py::test_neg"]},
        {"criterion": criteria[2], "tests": []},
    ]
    text = render_handoff(
        1, "Mul", "partial", prose, [gate], criteria=render_criteria(criteria, entries, gate)
    )
    assert check_handoff_text(text) == [
        (
            "acceptance criterion C2 ('Negative numbers work too.') cites test 't.py::test_neg', which did not pass "
            "in the final tests gate (FAILED)"
        )
    ]


def test_a_parametrized_test_is_cited_by_its_own_id_and_passes_only_when_every_case_did(tmp_path):
    from stepkit.protocol.criteria import find_test, statuses_seen

    gate = _tests_gate(
        tmp_path,
        {
            "t.py::test_a[x]": "passed",
            "t.py::test_a[y]": "passed",
            "t.py::test_b[x]": "passed",
            "t.py::test_b[y]": "failed",
        },
    )
    statuses = statuses_seen(gate)
    assert statuses[find_test("t.py::test_a", statuses)] == "passed"
    assert statuses[find_test("test_b", statuses)] == "FAILED"


def test_a_cited_id_that_did_not_run_is_answered_with_the_closest_ids_that_did(tmp_path):
    outcomes = {
        "src/ms.test.ts › ms(string) › should parse ms": "passed",
        "src/ms.test.ts › ms(number) › should format ms": "passed",
        "tests/test_calc.py::test_mul": "passed",
    }
    gate = _tests_gate(tmp_path, outcomes)
    criteria = ["It parses.", "It multiplies."]
    entries = [
        {"criterion": "C1", "tests": ["ms(string) should parse ms"]},  # jest's › left out
        {"criterion": "C2", "tests": ["tests/test_calc.py::test_mull"]},  # a typo
        {"criterion": "C2", "tests": ["test_division"]},  # like nothing that ran
    ]
    problems = criteria_problems(criteria, entries, gate)
    assert problems[0].endswith(
        "did not run in the final tests gate; the closest ids that ran: "
        "`src/ms.test.ts › ms(string) › should parse ms`"
    )
    assert "; the closest ids that ran: `tests/test_calc.py::test_mul`" in problems[1]
    assert problems[2].endswith("did not run in the final tests gate")
