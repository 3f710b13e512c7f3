"""The judges read a gate's typed evidence, never its text: evidence whose
text says one thing and whose fields another is judged by the fields.  A
third-party parser's plain string is read once, where it comes in."""

from __future__ import annotations

from stepkit import hookimpl
from stepkit.records import Evidence, FirstError, GateResult
from stepkit.workspace.evidence import condense, summary_of
from stepkit.workspace.gates import _with_printed_failures
from stepkit.workspace.stall import failure_signature
from stepkit.workspace.testresults import TestResults, failing_of
from tests.support.evidence_logs import evidence_pm

#: The text a built-in parser renders for t.py::a failing.
TEXT_A = (
    "$ pytest\nexit code: 1\nfailing tests (1):\n  FAILED t.py::a - assert 0\n"
    "first error of each failure:\n  a\n    E   assert 0\nsummary: 1 failed"
)


def gate(found: Evidence, **fields) -> GateResult:
    return GateResult(
        name="tests", status="fail", evidence=TEXT_A, condensed=found, log="/l/t.log", **fields
    )


def test_the_stall_check_reads_the_fields_not_the_text():
    b = Evidence(
        text=TEXT_A,
        failing=["FAILED t.py::b - assert 1"],
        tests={"t.py::b": "failed"},
        errors=[FirstError(heading="b", lines=["E   assert 1"])],
    )
    c = b.model_copy(update={"failing": ["FAILED t.py::c - assert 1"]})
    assert failure_signature(gate(b)) == "tests | FAILED t.py::b - assert 1 | E assert 1"
    assert failure_signature(gate(b)) != failure_signature(gate(c))  # the same text
    noisy = b.model_copy(update={"text": "something else entirely\nfailing tests (9):\n  x"})
    assert failure_signature(gate(b)) == failure_signature(gate(noisy))


def test_a_hidden_failure_is_no_part_of_the_signature():
    found = Evidence(failing=["FAILED t.py::old - x", "FAILED t.py::new - y"])
    pre = gate(found, preexisting_failures=["t.py::old"])
    assert failure_signature(pre) == "tests | FAILED t.py::new - y | "


def test_the_failing_tests_are_the_fields_not_the_listed_text():
    found = Evidence(text=TEXT_A, tests={"t.py::b": "errored"})
    assert failing_of(found).outcomes == {"t.py::b": "errored"}
    assert failing_of(Evidence(text=TEXT_A)) is None
    report = TestResults(source="junit XML", outcomes={"t.py::a": "passed"})
    merged = _with_printed_failures(report, found)
    assert merged.outcomes == {"t.py::a": "passed", "t.py::b": "errored"}


class _Typed:
    @hookimpl(tryfirst=True)
    def stepkit_condense_output(self, command):
        if command == "typed":
            return Evidence(
                text="failing tests (1):\n  t.py::a\nsummary: text says 1 failed",
                tests={"t.py::z": "failed"},
                summary="fields say 3 failed",
            )
        return None


class _Plain:
    @hookimpl(tryfirst=True)
    def stepkit_condense_output(self, command):
        if command == "plain":
            return (
                "failing tests (2):\n  FAILED t.py::a - assert 0\n  ERROR t.py::b\n"
                "first error of each failure:\n  a\n    E   assert 0\nsummary: 1 failed, 1 error"
            )
        return None


def test_a_typed_answer_is_judged_by_its_fields():
    pm = evidence_pm()
    pm.register(_Typed(), name="typed")
    found = condense(pm, "tests", "typed", "out\n", 1, None)
    assert found.text.startswith("$ typed\nexit code: 1\nfailing tests (1):\n  t.py::a")
    assert summary_of(found, "out") == "fields say 3 failed"
    assert failing_of(found).outcomes == {"t.py::z": "failed"}


def test_a_plain_string_is_read_once_at_the_border():
    pm = evidence_pm()
    pm.register(_Plain(), name="plain")
    found = condense(pm, "tests", "plain", "out\n", 1, None)
    assert found.tests == {"t.py::a": "failed", "t.py::b": "errored"}
    assert found.failing == ["FAILED t.py::a - assert 0", "ERROR t.py::b"]
    assert found.first_error() == "E   assert 0"
    assert summary_of(found, "out") == "1 failed, 1 error"


def test_a_builtin_parser_answers_typed():
    found = condense(
        evidence_pm(),
        "tests",
        "pytest -q",
        "FAILED t.py::a - assert 0\n1 failed in 0.1s\n",
        1,
        None,
    )
    assert found.tests == {"t.py::a": "failed"} and found.summary == "1 failed"
