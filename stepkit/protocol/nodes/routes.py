"""The step-runner's routers: functions of the state and of the switches the
run started with (route_coder_result also reads the files the step changed,
to tell whether the round changed anything), and the nodes that only turn
state into state (resolve_step, revise_from_choice, note_llm_fault).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.protocol.fixloop import FIX_RULES
from stepkit.protocol.state import step_state
from stepkit.protocol.switches import switch_on
from stepkit.records import CoderResult, Outcome, StageContext
from stepkit.text import one_line

REVIEW_FILE_THRESHOLD = 5


def resolve_step(ctx: StageContext) -> Outcome:
    """Find the step, load its plan, previous handoff and NOTES.md, check deps."""
    from stepkit.errors import PlanError
    from stepkit.planrepo.model import PlanRepo
    from stepkit.planrepo.sections import plan_section
    from stepkit.planrepo.stepstate import StepStates

    try:
        repo = PlanRepo.load(ctx.plans_dir)
        state = step_state(ctx)
        step = repo.resolve(str(state.step_request or "next"), str(state.prompt or ""))
    except PlanError as exc:
        return _error(str(exc))
    previous = repo.previous_handoff(step)
    unsatisfied = StepStates(repo).unsatisfied(step)
    later = [s for s in repo.steps if s.number > step.number]
    updates: dict[str, Any] = {
        "step": step.number,
        "title": step.title,
        "plan_path": str(step.path),
        "plan_text": step.path.read_text(encoding="utf-8"),
        "handoff_path": str(repo.handoff_path(step)),
        "previous_handoff": previous.path.read_text(encoding="utf-8") if previous else "",
        "notes": repo.notes_text,
        "unsatisfied": unsatisfied,
        "later_steps": [
            {
                "step": s.number,
                "title": s.title,
                "path": str(s.path),
                "edge_cases": plan_section(s.body, "Edge cases") or "",
            }
            for s in later
        ],
    }
    return Outcome(route="deps unsatisfied" if unsatisfied else "deps satisfied", updates=updates)


def _error(reason: str) -> Outcome:
    return Outcome(route="error", updates={"failure_reason": reason})


# -- routers -----------------------------------------------------------------


def route_staleness(ctx: StageContext) -> Outcome:
    """STEP_AUTOAPPROVE=1 (at the run's start) skips the deviation gate; a major deviation asks."""
    if switch_on(ctx.settings, "STEP_AUTOAPPROVE"):
        return Outcome(
            route="else",
            updates={"deviation_autoapproved": step_state(ctx).has_major_deviation},
        )
    return Outcome(route="major deviation" if step_state(ctx).has_major_deviation else "else")


def route_coder_result(ctx: StageContext) -> Outcome:
    """Read the coder's sentinel; anything but CODER_COMPLETE ends the run.
    Each round is recorded in ``coder_rounds`` (:func:`_coder_round`)."""
    result = step_state(ctx).coder_result or CoderResult()
    sentinel = result.sentinel
    rounds = _coder_round(ctx)
    if sentinel == "CODER_COMPLETE":
        return Outcome(route="CODER_COMPLETE", updates=rounds)
    if sentinel == "CODER_REJECTED":
        # end_failure ends a run with rejected_at set as STEP_REJECTED (see step_runner.yaml)
        reason = result.sentinel_reason
        where = f"the coder: {reason}" if reason else "the coder's own plan-approval gate"
        return Outcome(route="REJECTED / FAILED", updates={**rounds, "rejected_at": where})
    return Outcome(
        route="REJECTED / FAILED", updates={**rounds, "failure_reason": _coder_failure(result)}
    )


def _coder_failure(result: CoderResult) -> str:
    """Why a coder result that is neither complete nor rejected ends the run."""
    if result.sentinel != "CODER_FAILED":
        return "no recognizable sentinel in the coder's output"
    if result.sentinel_reason:
        return f"the coder failed: {result.sentinel_reason}"
    if not result.sentinel_inferred:
        return "coder fix-loop exhausted"
    code = result.exit_code
    if code not in (None, 0):
        return f"the coder exited {code} without a sentinel"
    return "the coder reported an error without a sentinel"


def _coder_round(ctx: StageContext) -> dict[str, Any]:
    """One line for this coder round in ``coder_rounds``: what it was for and
    whether it changed the tree outside the plan repo, and the fingerprint of
    the step's changed files (``coder_tree``) the next round is compared with.

    The first round changed nothing when the step changed no file; a later
    one when the changed files' bytes are those the previous round left (a
    formatter run in between counts as a change: the claim stays on the safe
    side)."""
    state = step_state(ctx)
    rounds = state.coder_rounds
    number = len(rounds) + 1
    why = "the step"
    if number > 1:
        asked = state.fix_instructions.strip().splitlines() or ["(no instructions)"]
        why = f'"{one_line(asked[0])[:100]}"'
    # a state without the key (no scope snapshot) is told from an empty list
    changed = state.changed_files if "changed_files" in state.model_fields_set else None
    tree = _fingerprint(ctx.project_dir, changed) if changed is not None else None
    log = _round_record(ctx, number)
    if changed is None:
        what = "its changes are unknown (no scope snapshot)"
    elif number == 1 and not changed:
        what = "CHANGED NOTHING: no file outside the plan repo differs from the step's start"
    elif number > 1 and tree == state.coder_tree:
        what = (
            f"CHANGED NOTHING: no file outside the plan repo differs from after round {number - 1}"
        )
    elif number == 1:
        what = f"changed {len(changed)} file(s)"
    else:
        what = f"changed the tree ({len(changed)} file(s) differ from the step's start)"
    return {"coder_rounds": [*rounds, f"round {number} ({why}): {what}"], "coder_tree": tree, **log}


#: How much of a round's task and report its record keeps (the checkpoint holds every round).
ROUND_TASK_CHARS = 2_000
ROUND_REPORT_CHARS = 4_000


def _round_record(ctx: StageContext, number: int) -> dict[str, Any]:
    """This round in ``coder_round_log``, for the handoff writer: what it was
    asked (the step, or the fix instructions it got), the coder's report, and
    the files whose bytes differ from after the previous round (each file's
    content id is kept in the record for the next round to compare)."""
    from stepkit.workspace.evidence import clip_middle
    from stepkit.workspace.scope.tree import blob_id

    state = step_state(ctx)
    log = state.coder_round_log
    before = log[-1].file_ids if log else {}
    ids = {rel: blob_id(Path(ctx.project_dir) / rel) or "absent" for rel in state.changed_files}
    touched = sorted(
        rel for rel in {*ids, *before} if ids.get(rel, "unchanged") != before.get(rel, "unchanged")
    )
    task = (
        "implement the step (the implementation brief)"
        if number == 1
        else (state.fix_instructions or "(no instructions)").strip()
    )
    report = ((state.coder_result and state.coder_result.text) or "(no report)").strip()
    record = {
        "round": number,
        "task": clip_middle(task, ROUND_TASK_CHARS, "task"),
        "report": clip_middle(report, ROUND_REPORT_CHARS, "report"),
        "changed_files": touched,
        "file_ids": ids,
    }
    return {"coder_round_log": [*(entry.model_dump() for entry in log), record]}


def _fingerprint(project_dir: Path, changed: list[str]) -> str:
    """A digest of the changed files' contents (a link's target; None for a
    file that is absent or unreadable), as the scope guard hashes a tree."""
    from stepkit.workspace.scope.tree import blob_id, hash_ids

    return hash_ids({rel: blob_id(Path(project_dir) / rel) or "absent" for rel in changed})


def route_sweep(ctx: StageContext) -> Outcome:
    """Review when the sweep asks for it, 5+ files changed or a tamper flag
    was raised; STEP_SKIP_REVIEW=1 (at the run's start) never."""
    if switch_on(ctx.settings, "STEP_SKIP_REVIEW"):
        return Outcome(route="else", updates={"review_skipped": "STEP_SKIP_REVIEW=1"})
    state = step_state(ctx)
    many_files = len(state.changed_files) >= REVIEW_FILE_THRESHOLD
    if many_files or state.needs_independent_review or state.tamper_flags:
        return Outcome(route="5+ files or boundary")
    return Outcome(route="else")


def route_review(ctx: StageContext) -> Outcome:
    """Send the critical findings back to the coder, within the review budget.

    A reviewer fault is never read as findings, so it never spends a fix
    attempt."""
    from stepkit.protocol.stages import stage_fault

    state = step_state(ctx)
    if stage_fault(ctx, "review"):
        return Outcome(route="else")
    critical = [f.line() for f in state.review_findings if f.severity == "critical"]
    if not critical:
        return Outcome(route="else")
    attempts = state.review_attempts
    if attempts >= state.max_review_attempts:
        return Outcome(route="else", updates={"unresolved_critical": critical})
    instructions = "Fix these critical review findings (and nothing else):\n" + "\n".join(critical)
    return Outcome(
        route="🔴 critical findings",
        updates={
            "review_attempts": attempts + 1,
            "fix_instructions": f"{instructions}\n{FIX_RULES}",
            "fix_history": [f"review fix {attempts + 1}: {len(critical)} critical finding(s)"],
        },
    )


def revise_from_choice(ctx: StageContext) -> Outcome:
    """Free text at the final gate becomes the coder's fix instructions."""
    text = step_state(ctx).revision_choice.strip()
    return Outcome(
        updates={
            "fix_instructions": f"Revision requested at the approval gate: {text}",
            "fix_history": [f"revision requested: {text}"],
        }
    )


def note_llm_fault(ctx: StageContext) -> Outcome:
    """Distil the engine's failure text into a short fault note."""
    state = step_state(ctx)
    raw = state.fault_note or state.failure_reason or "unknown LLM fault"
    first_paragraph = raw.strip().split("\n\n", 1)[0]
    note = " ".join(first_paragraph.split())[:600]
    return Outcome(
        updates={
            "fault_note": note,
            "failure_reason": state.failure_reason or "LLM stage fault",
        }
    )
