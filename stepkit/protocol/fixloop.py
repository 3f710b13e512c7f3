"""The rules of both fix loops: the step's (the ``fix_loop_gate`` node) and
the built-in coder's own (``stepkit.plugins.coders.anthropic``).

- one budget rule and one "no progress" rule (:func:`next_fix`): the loop
  stops when a failure's signature repeats after a fix attempt, else when
  the attempts used reach the budget;
- the built-in coder's budget, read in one place: ``coder_fix_budget``
  (:func:`coder_fix_budget`; the step's is the state's ``max_fix_attempts``);
- the sentence that states the fix rules to the coder (:data:`FIX_RULES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stepkit.records import GateResult
from stepkit.workspace.stall import failure_signature

FIX_RULES = "Make the minimal fix, no refactoring. Regressions caused by this change are in scope."
#: the step's fix attempts when the state does not say (the step-runner's
#: initial state sets ``max_fix_attempts`` to it; ``--set`` changes it)
STEP_FIX_BUDGET = 2
#: the built-in coder's own fix attempts in one implement round (``--set coder_fix_budget=N``)
CODER_FIX_BUDGET = 3


def coder_fix_budget(settings: Mapping[str, Any]) -> int:
    """The built-in coder's fix budget: ``coder_fix_budget`` of the run settings."""
    return int(settings.get("coder_fix_budget") or CODER_FIX_BUDGET)


@dataclass(frozen=True)
class FixVerdict:
    """What a fix loop does about a failing gate: ``stop`` says why it ends
    (None: spend one more attempt); ``signature`` is the failure's, to
    compare the next failure with."""

    signature: str
    stop: str | None = None


def next_fix(
    failing: GateResult, attempts: int, budget: int, previous_signature: str | None
) -> FixVerdict:
    """Stop or go on after ``failing`` failed with ``attempts`` of ``budget``
    fix attempts used; ``previous_signature``: the failure the last attempt
    was asked to fix (None before the first).

    A failure whose signature repeats after a fix attempt ends the loop at
    once ("no progress") instead of spending the rest of the budget."""
    signature = failure_signature(failing)
    if is_stalled(previous_signature, signature):
        return FixVerdict(
            signature,
            f"no progress: the {failing.name} gate failed the same way "
            f"after fix attempt {attempts}",
        )
    if attempts >= budget:
        return FixVerdict(
            signature,
            f"fix budget spent: {attempts} of {budget} fix attempts used "
            f"and the {failing.name} gate still fails",
        )
    return FixVerdict(signature)


def is_stalled(previous_signature: str | None, current: str | None) -> bool:
    """True when a fix attempt ended with exactly the failure it started from."""
    return bool(previous_signature) and previous_signature == current
