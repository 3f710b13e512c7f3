"""The step's fields of the ``--json`` object of ``stepkit run`` and
``stepkit resume``: what the run state says of the step (its number, title,
plan and handoff), its gates, the fix attempts it used and its usage.

:func:`stepkit.api.run_step` and :func:`stepkit.api.resume_run` put them in
:attr:`stepkit.records.RunResult.report`, so the result model and the
generic engine never read a step-protocol key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.protocol.state import step_state
from stepkit.records import RunResult


def with_step_report(result: RunResult) -> RunResult:
    """``result`` with :func:`step_report` of its final state (in place; returns it)."""
    result.report = step_report(result.state)
    return result


def step_report(state: dict[str, Any]) -> dict[str, Any]:
    """``step``, ``title``, ``plan``, ``handoff`` (the approved file in the
    plan repo, when it is there), ``handoff_draft`` (the run's draft not
    approved yet, when it is there), ``gates``, ``fix_attempts`` and
    ``usage``, in the object's order."""
    view = step_state(state)
    given = view.model_fields_set  # a key the run never set is null, as it always was
    handoff, draft = view.handoff_path, view.handoff_draft
    return {
        "step": view.step,
        "title": view.title if "title" in given else None,
        "plan": view.plan_path if "plan_path" in given else None,
        "handoff": handoff if handoff and Path(handoff).is_file() else None,
        "handoff_draft": draft if draft and Path(draft).is_file() else None,
        "gates": [gate.public() for gate in view.gates],
        "fix_attempts": view.fix_attempts,
        "usage": view.usage.model_dump(),
    }
