"""Orient's scale (minor / major) and the sweep's (handled / punted) stand on
the one finding scale (critical / should_fix / minor) through one mapping,
:func:`stepkit.records.finding_severity`, which orient's deviation verdict reads."""

from __future__ import annotations

from typing import get_args

from stepkit import records
from stepkit.plugins.stages.answers import OrientAnswer, OrientFinding
from stepkit.plugins.stages.orient import orient_result
from stepkit.records import OrientSeverity, Severity, SweepVerdict, finding_severity


def answer(*severities: str) -> OrientAnswer:
    return OrientAnswer(
        plan_summary="adds mul",
        implementation_brief="write mul",
        findings=[
            OrientFinding(
                severity=severity,
                plan_says="calc.py has add",
                code_has="calc/ops.py has add",
                evidence="calc/ops.py:3",
                correction="edit calc/ops.py",
            )
            for severity in severities
        ],
        deviation_summary="the module moved",
    )


def test_every_word_of_either_scale_stands_on_the_finding_scale():
    placed = {word: finding_severity(word) for word in get_args(OrientSeverity)}
    placed.update({word: finding_severity(word) for word in get_args(SweepVerdict)})
    assert placed == {
        "major": "critical",
        "minor": "minor",
        "punted": "should_fix",
        "handled": "minor",
    }
    assert set(placed.values()) <= set(get_args(Severity))


def test_an_orient_finding_is_a_finding_of_the_one_scale():
    finding = answer("major").findings[0].finding()
    assert (finding.severity, finding.file) == ("critical", "calc/ops.py:3")
    assert finding.text == "plan says: calc.py has add; code has: calc/ops.py has add"


def test_the_deviation_verdict_reads_the_mapping_not_the_word(monkeypatch):
    assert orient_result(answer("minor", "major")).has_major_deviation
    result = orient_result(answer("minor"))
    assert (result.has_major_deviation, result.deviation_summary) == (False, "None")
    monkeypatch.setitem(records._ON_THE_FINDING_SCALE, "major", "should_fix")
    assert not orient_result(answer("major")).has_major_deviation
