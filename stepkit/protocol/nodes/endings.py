"""The step-runner's end-node renderers: the text each ending prints, opened by
its sentinel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.protocol.next_steps import next_commands
from stepkit.protocol.state import StepState, step_state
from stepkit.protocol.watched import unseen_flags
from stepkit.records import GATE_ORDER, StageContext, TamperFlag


def gates_report(state: StepState) -> list[str]:
    """One line per gate with its ACTUAL status; never "passed" for a gate that did not run."""
    by_name = {gate.name: gate for gate in state.gates}
    lines = []
    for name in GATE_ORDER:
        gate = by_name.get(name)
        if gate is None:
            lines.append(f"- {name}: NOT RUN (the run ended before this gate)")
        else:
            lines.append(f"- {gate.status_line()}")
    return lines


def _head(sentinel: str, state: StepState) -> list[str]:
    step = "?" if state.step is None else state.step
    lines = [sentinel, f"Step: {step} — {state.title}".rstrip(" —")]
    if state.step_choice:
        lines.append(f"Chosen: {state.step_choice}")
    if state.plan_path:
        lines.append(f"Plan: {state.plan_path}")
    if state.kept_handoff:
        lines.append(f"Previous handoff kept at: {state.kept_handoff}")
    if sentinel != "STEP_COMPLETE" and state.handoff_draft:
        lines.append(f"Handoff draft (not approved): {state.handoff_draft}")
    return lines


def render_success(ctx: StageContext) -> str:
    """STEP_COMPLETE: the user approved; only now is the handoff put in the
    plan repo (:func:`approve_handoff`) and the plan marked complete."""
    from stepkit.planrepo.edits import set_status

    state = step_state(ctx)
    approve_handoff(ctx)
    if state.plan_path:
        set_status(Path(state.plan_path), "complete")
    lines = _head("STEP_COMPLETE", state)
    lines.append(f"Handoff: {state.handoff_path or None}")
    lines.append("Gates:")
    lines.extend(gates_report(state))
    lines.append(f"Fix attempts: {state.fix_attempts} of {state.max_fix_attempts}")
    from stepkit.protocol.stages import pipeline_faults

    lines.extend(pipeline_faults(ctx))
    lines.extend(_flag_lines(state))
    lines.append("")
    lines.append("Summary:")
    lines.append(state.step_summary or "None")
    lines.append("")
    lines.append("Downstream plan updates:")
    lines.append(_text(state.downstream_updates))
    if state.applied_annotations:
        lines.append("Edge cases added to later plans:")
        lines.extend(f"- step {a.step}: {a.edge_case}" for a in state.applied_annotations)
    from stepkit.protocol.commit_hint import commit_hint, next_step_lines
    from stepkit.workspace.worktree_record import SETTING

    if not ctx.settings.get(SETTING):  # a --worktree run commits on its branch itself
        lines.extend(commit_hint(state, ctx.project_dir))
    lines.extend(next_step_lines(state, ctx.project_dir))
    return _output(lines)


def approve_handoff(ctx: StageContext) -> None:
    """Move the run's handoff draft to its place in the plan repo: the one
    write of a handoff there, so a run that did not end approved leaves none."""
    from stepkit.protocol.stages import handoff_draft
    from stepkit.workspace.files import atomic_write

    state = step_state(ctx)
    if not state.handoff_path:
        return
    draft = handoff_draft(ctx)
    if not draft.is_file():
        return
    target = Path(state.handoff_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, draft.read_bytes())
    draft.unlink()


def render_blocked(ctx: StageContext) -> str:
    """STEP_BLOCKED: dependencies unsatisfied and the user declined."""
    state = step_state(ctx)
    lines = _head("STEP_BLOCKED", state)
    lines.append("Unsatisfied dependencies:")
    lines.extend(f"- {reason}" for reason in state.unsatisfied or ["None"])
    return _output(lines)


def render_rejected(ctx: StageContext) -> str:
    """STEP_REJECTED: aborted at the deviation gate or the coder's approval gate."""
    state = step_state(ctx)
    lines = _head("STEP_REJECTED", state)
    lines.append(f"Rejected at: {state.rejected_at or 'the deviation gate'}")
    lines.append(f"Deviation summary: {state.deviation_summary or 'None'}")
    lines.extend(_flag_lines(state))
    lines.extend(_coder_lines(state))
    lines.extend(next_commands(state, _run_id(ctx), rejected=True))
    return _output(lines)


def render_failure(ctx: StageContext) -> str:
    """STEP_FAILED: never an empty shell — reason, coder result, last gate output."""
    state = step_state(ctx)
    lines = _head("STEP_FAILED", state)
    reason = state.failure_reason or ("a pipeline stage faulted" if state.fault_note else "unknown")
    lines.append(f"Reason: {reason}")
    if state.fault_note:
        lines.append(f"{_fault_label(ctx)}: {state.fault_note}")
    lines.append(f"Fix attempts: {state.fix_attempts} of {state.max_fix_attempts}")
    lines.extend(_flag_lines(state, unseen_flags(ctx)))
    lines.extend(_coder_lines(state))
    if state.gates:
        lines.append("Gates:")
        lines.extend(gates_report(state))
        for gate in state.gates:
            if gate.name in ("build", "tests") and gate.status != "not_run":
                lines.append(f"Last {gate.name} output:")
                lines.append(_quoted(gate.evidence))
    lines.extend(next_commands(state, _run_id(ctx)))
    return _output(lines)


def _run_id(ctx: StageContext) -> str | None:
    return ctx.run_dir.name if ctx.run_dir else None


def _fault_label(ctx: StageContext) -> str:
    """``Coder failure`` when the node that faulted ran the coder, else
    ``Pipeline fault`` (an LLM stage or another node)."""
    node = step_state(ctx).last_fault_node
    coder_nodes = (ctx.settings.get("stage_nodes") or {}).get("implement") or ()
    return "Coder failure" if node in coder_nodes else "Pipeline fault"


def _flag_lines(
    state: StepState, unseen: list[TamperFlag] | tuple[TamperFlag, ...] = ()
) -> list[str]:
    """Every tamper flag (and ``unseen`` ones not recorded yet) and scope
    deviation the harness recorded."""
    from stepkit.protocol.glance import flag_sections

    lines = []
    for title, _none, items in flag_sections(state, unseen):
        if items:
            lines.append(title)
            lines.extend(f"- {item}" for item in items)
    return lines


def _coder_lines(state: StepState) -> list[str]:
    """The tail of the coder's result, quoted, when there is one."""
    coder = state.coder_result.text if state.coder_result else ""
    return ["Coder result:", _quoted(coder)] if coder else []


def _text(value: Any) -> str:
    if not value:
        return "None"
    if isinstance(value, list):
        return "\n".join(f"- {item}" for item in value)
    return str(value)


def _quoted(text: str, lines: int = 40) -> str:
    """The last ``lines`` lines of text that is not stepkit's (a coder's, a
    gate's), each prefixed with ``> ``."""
    parts = str(text).rstrip().splitlines()
    return "\n".join(f"> {line}" for line in parts[-lines:]) if parts else "None"


def _output(lines: list[str]) -> str:
    """An end node's output (the engine makes sure no line but the first
    starts with a sentinel, wherever the text came from)."""
    return "\n".join(lines)
