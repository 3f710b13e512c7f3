"""The fix loops' rules have one home (stepkit/protocol/fixloop.py): the
step's loop and the built-in coder's stop for the same reasons, in the same
words, and nothing else spells the rules out again."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from stepkit.protocol.fixloop import (
    CODER_FIX_BUDGET,
    FIX_RULES,
    STEP_FIX_BUDGET,
    coder_fix_budget,
    next_fix,
)
from stepkit.protocol.graphs import load_protocol_graph
from stepkit.protocol.state import step_state
from stepkit.records import Evidence, GateResult

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "stepkit" / "protocol" / "fixloop.py"


def failing(message: str = "E   AssertionError: greet returned 'Hi'") -> GateResult:
    """A failed gate whose output no parser recognised (its condensed text alone)."""
    text = f"$ pytest\nexit code: 1\n{message}\n"
    return GateResult(
        name="tests",
        status="fail",
        command="pytest",
        exit_code=1,
        evidence=text,
        condensed=Evidence(text=text),
    )


def test_the_budgets_are_the_documented_ones():
    assert load_protocol_graph().initial_state["max_fix_attempts"] == STEP_FIX_BUDGET == 2
    assert step_state({}).max_fix_attempts == 2
    assert step_state({"max_fix_attempts": 5}).max_fix_attempts == 5
    assert (
        coder_fix_budget({}) == CODER_FIX_BUDGET == 3
        and coder_fix_budget({"coder_fix_budget": 1}) == 1
    )


def test_an_attempt_is_spent_while_the_budget_lasts_and_the_failure_changes():
    first = next_fix(failing(), 0, 2, None)
    assert first.stop is None and first.signature
    second = next_fix(failing("E   AssertionError: greet returned 'Hey'"), 1, 2, first.signature)
    assert second.stop is None and second.signature != first.signature
    spent = next_fix(failing("E   NameError: name 'x' is not defined"), 2, 2, second.signature)
    assert spent.stop == "fix budget spent: 2 of 2 fix attempts used and the tests gate still fails"


def test_the_same_failure_after_an_attempt_is_no_progress_whatever_the_budget():
    first = next_fix(failing(), 0, 9, None)
    again = next_fix(failing(), 1, 9, first.signature)
    assert again.stop == "no progress: the tests gate failed the same way after fix attempt 1"


def _sources() -> list[Path]:
    return [
        p for d in ("stepkit", "plugins") for p in sorted((ROOT / d).rglob("*.py")) if p != HOME
    ]


@pytest.mark.parametrize(
    "words", [FIX_RULES, "Make the minimal fix", "fix budget spent", "no progress:"]
)
def test_no_other_module_spells_the_rules_out(words):
    typed = [
        str(p.relative_to(ROOT))
        for p in _sources()
        if any(
            isinstance(node, ast.Constant) and isinstance(node.value, str) and words in node.value
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        )
    ]
    assert typed == []


def test_no_other_module_compares_failure_signatures():
    """Only the rule itself calls is_stalled; the loops ask next_fix."""
    callers = [
        str(p.relative_to(ROOT))
        for p in _sources()
        if "is_stalled" in p.read_text(encoding="utf-8")
    ]
    assert callers == []
