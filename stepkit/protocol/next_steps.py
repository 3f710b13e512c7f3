"""What a run that did not complete ends with: the one or two commands that
make sense for why it ended, read from the run's state (which gate, the fix
budget, the coder's result), never from its rendered text."""

from __future__ import annotations

from stepkit.protocol.state import StepState


def next_commands(state: StepState, run_id: str | None, *, rejected: bool = False) -> list[str]:
    """``Next:`` and its lines for STEP_FAILED (and, ``rejected``, STEP_REJECTED)."""
    step = state.step
    rerun = f"stepkit run --step {step}" if step is not None else "stepkit run"
    undo = (
        [f"stepkit undo {run_id}    # the tree back as the step found it; the change kept"]
        if run_id and state.scope_snapshot_digest
        else []
    )
    gates = state.gates
    budget = state.max_fix_attempts
    attempts = state.fix_attempts
    plan = state.plan_path or "the step's plan file"
    if rejected:
        lines = [*undo, f"edit {plan} (what the step should do), then: {rerun}"]
    elif any(gate.status == "error" for gate in gates) or state.fault_note:
        lines = [f"fix what the reason above names (the machine, not the code), then: {rerun}"]
    elif state.coder_result and state.coder_result.crashed:
        lines = [*undo, f"{rerun}    # the coder again, from the step's start"]
    elif attempts >= budget and any(gate.status == "fail" for gate in gates):
        lines = [
            *undo,
            f"{rerun} --set max_fix_attempts={budget + 2}    # more fix attempts",
            f"or make {plan} say more precisely what passing takes",
        ]
    elif any(gate.status == "fail" for gate in gates):  # stopped early: no progress
        lines = [*undo, f"edit {plan} (the coder made no progress on it), then: {rerun}"]
    else:
        lines = [*undo, rerun]
    return ["", "Next:", *(f"  {line}" for line in lines)]
