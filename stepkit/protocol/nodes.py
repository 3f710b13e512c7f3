"""The step-runner graph's script nodes and end-node renderers.

Each function is named after its node in ``step_runner.yaml``, takes the
node's :class:`~stepkit.records.StageContext` and returns an
:class:`~stepkit.records.Outcome` whose ``route`` is one of the labels drawn
on that node's edges in the seed diagram:

=====================  =====================================================
node                   route labels
=====================  =====================================================
resolve_step           ``deps satisfied`` · ``deps unsatisfied`` · ``error``
route_staleness        ``major deviation`` · ``else``
route_coder_result     ``CODER_COMPLETE`` · ``REJECTED / FAILED``
verify_format_lint     ``pass`` · ``fail``
verify_build           ``pass`` · ``fail``
verify_tests           ``pass`` · ``fail``
fix_loop_gate          ``budget left`` · ``budget spent``
route_sweep            ``5+ files or boundary`` · ``else``
route_review           ``🔴 critical findings`` · ``else``
check_handoff          ``schema valid`` · ``one retry`` · ``invalid twice``
revise_from_choice     (next)
note_llm_fault         (next)
=====================  =====================================================

Routers are pure functions of the state and the switches the run started
with; the verify nodes run the gates.  The
harness, never a model, decides what passed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.protocol.switches import switch_on
from stepkit.records import GATE_ORDER, GateResult, Outcome, StageContext

CRITICAL = "🔴"
REVIEW_FILE_THRESHOLD = 5
FIX_RULES = "Make the minimal fix, no refactoring. Regressions caused by this change are in scope."


# -- resolve -----------------------------------------------------------------


def resolve_step(ctx: StageContext) -> Outcome:
    """Find the step, load its plan, previous handoff and NOTES.md, check deps."""
    from stepkit.errors import PlanError
    from stepkit.planrepo.model import PlanRepo, step_from_prompt
    from stepkit.planrepo.sections import plan_section

    try:
        repo = PlanRepo.load(ctx.plans_dir)
    except PlanError as exc:
        return _error(str(exc))
    requested = str(ctx.state.get("step_request") or "next")
    if requested == "next":
        from_prompt = step_from_prompt(str(ctx.state.get("prompt") or ""))
        requested = str(from_prompt) if from_prompt is not None else "next"
    if requested == "next":
        step = repo.next_step()
        if step is None:
            return _error(f"no in-progress or pending step in {repo.steps_dir}")
    else:
        if not requested.isdigit():
            return _error(f"step {requested!r} is not a step number or 'next'")
        step = repo.step(int(requested))
        if step is None:
            return _error(f"step {requested} not found in {repo.steps_dir}")

    previous = repo.previous_handoff(step)
    unsatisfied = repo.unsatisfied(step)
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
            {"step": s.number, "title": s.title, "path": str(s.path), "edge_cases": plan_section(s.body, "Edge cases") or ""}
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
        return Outcome(route="else", updates={"deviation_autoapproved": bool(ctx.state.get("has_major_deviation"))})
    return Outcome(route="major deviation" if ctx.state.get("has_major_deviation") else "else")


def route_coder_result(ctx: StageContext) -> Outcome:
    """Read the coder's sentinel; anything but CODER_COMPLETE ends the run."""
    result = ctx.state.get("coder_result") or {}
    sentinel = result.get("sentinel")
    if sentinel == "CODER_COMPLETE":
        return Outcome(route="CODER_COMPLETE")
    if sentinel == "CODER_REJECTED":
        # end_failure ends a run with rejected_at set as STEP_REJECTED (see step_runner.yaml)
        return Outcome(route="REJECTED / FAILED", updates={"rejected_at": "the coder's own plan-approval gate"})
    reason = "coder fix-loop exhausted" if sentinel == "CODER_FAILED" else "no recognizable sentinel in the coder's output"
    return Outcome(route="REJECTED / FAILED", updates={"failure_reason": reason})


def route_sweep(ctx: StageContext) -> Outcome:
    """Review when the sweep asks for it or 5+ files changed; STEP_SKIP_REVIEW=1
    (at the run's start) never."""
    if switch_on(ctx.settings, "STEP_SKIP_REVIEW"):
        return Outcome(route="else", updates={"review_skipped": "STEP_SKIP_REVIEW=1"})
    many_files = len(ctx.state.get("changed_files") or []) >= REVIEW_FILE_THRESHOLD
    if many_files or ctx.state.get("needs_independent_review"):
        return Outcome(route="5+ files or boundary")
    return Outcome(route="else")


def route_review(ctx: StageContext) -> Outcome:
    """Send 🔴 findings back to the coder, within the review budget.

    A reviewer fault is never read as findings, so it never spends a fix
    attempt."""
    from stepkit.protocol.stages import stage_fault

    state = ctx.state
    if stage_fault(ctx, "review"):
        return Outcome(route="else")
    report = str(state.get("review_report") or "")
    critical = [line.strip() for line in report.splitlines() if CRITICAL in line]
    if not critical:
        return Outcome(route="else")
    attempts = int(state.get("review_attempts", 0))
    if attempts >= int(state.get("max_review_attempts", 1)):
        return Outcome(route="else", updates={"unresolved_critical": critical})
    instructions = "Fix these critical review findings (and nothing else):\n" + "\n".join(critical)
    return Outcome(
        route="🔴 critical findings",
        updates={
            "review_attempts": attempts + 1,
            "fix_instructions": f"{instructions}\n{FIX_RULES}",
            "fix_history": [*state.get("fix_history", []), f"review fix {attempts + 1}: {len(critical)} critical finding(s)"],
        },
    )


# -- gates -------------------------------------------------------------------


def verify_format_lint(ctx: StageContext) -> Outcome:
    """Format first (recorded, never fails the step), then lint.  What the
    formatter did to the plan repo is undone (a copy kept) and flagged."""
    from stepkit.protocol.stages import undo_plan_edits
    from stepkit.workspace.scope import copy_plan_repo

    runner = _gate_runner(ctx, watch_format=True)
    plan_before = copy_plan_repo(ctx.project_dir, ctx.plans_dir)
    (fmt,) = runner.run(("format",))
    guarded = undo_plan_edits(ctx, plan_before, "format")
    (lint,) = runner.run(("lint",))
    updates = {**_merge_gates(ctx.state, [fmt, lint]), **guarded}
    updates["format_changed_tree"] = runner.format_changed_tree
    if guarded:
        edited_by = {*ctx.state.get("gates_edited_plan_repo", []), "format"}
        updates["gates_edited_plan_repo"] = sorted(edited_by)
    return Outcome(route="fail" if lint.failed else "pass", updates=updates)


def verify_build(ctx: StageContext) -> Outcome:
    """Build or type-check; no command is NOT RUN and the step goes on."""
    return _single_gate(ctx, "build")


def verify_tests(ctx: StageContext) -> Outcome:
    """The FULL test suite, not only the new tests."""
    return _single_gate(ctx, "tests")


def _single_gate(ctx: StageContext, name: str) -> Outcome:
    runner = _gate_runner(ctx, format_changed_tree=bool(ctx.state.get("format_changed_tree")))
    (result,) = runner.run((name,))
    return Outcome(route="fail" if result.failed else "pass", updates=_merge_gates(ctx.state, [result]))


def _gate_runner(ctx: StageContext, **options: Any):
    """The step's gate runner: each result is a ``gate`` event of the run, and
    the coder's own passing gates may stand in for a gate on the same bytes."""
    from stepkit.workspace.gates import GateRunner

    coder_gates = (ctx.state.get("coder_result") or {}).get("gates", [])
    reusable = [GateResult.model_validate(raw) for raw in coder_gates] if ctx.config.reuse_coder_evidence else []
    return GateRunner(
        ctx.pm, ctx.project_dir, ctx.config, ctx.log_dir(),
        on_gate=lambda result: ctx.emit("gate", **result.model_dump(exclude={"evidence"})),
        on_reused=lambda result, tree: ctx.emit("gate_reused", gate=result.name, tree_hash=tree),
        reusable=reusable, reused_from="the coder's own gate", **options,
    )


def _merge_gates(state: dict[str, Any], results: list[GateResult]) -> dict[str, Any]:
    """Replace the latest record of each gate; keep every run in gate_history."""
    latest = {g["name"]: g for g in state.get("gates", [])}
    for result in results:
        latest[result.name] = result.model_dump()
    ordered = [latest[name] for name in GATE_ORDER if name in latest]
    history = [*state.get("gate_history", []), *(r.model_dump(exclude={"evidence"}) for r in results)]
    return {"gates": ordered, "gate_history": history}


def fix_loop_gate(ctx: StageContext) -> Outcome:
    """Spend one step-level fix attempt on the first failing gate, or stop.

    A failure whose signature repeats after a fix attempt ends the loop at
    once ("no progress") instead of spending the rest of the budget."""
    from stepkit.workspace.stall import failure_signature, is_stalled

    state = ctx.state
    failing = _first_failing_gate(state)
    if failing is None:  # only a custom graph can get here without a failing gate
        return Outcome(route="budget spent", updates={"failure_reason": "fix loop entered with no failing gate"})
    attempts = int(state.get("fix_attempts", 0))
    budget = int(state.get("max_fix_attempts", 2))
    signature = failure_signature(failing)
    if is_stalled(state.get("last_failure_signature"), signature):
        return Outcome(route="budget spent", updates={
            "failure_reason": f"no progress: the {failing.name} gate failed the same way after fix attempt {attempts}",
        })
    if attempts >= budget:
        return Outcome(route="budget spent", updates={
            "failure_reason": f"fix budget spent: {attempts} of {budget} fix attempts used and the {failing.name} gate still fails",
        })
    instructions = (f"The {failing.name} gate failed after your change.\n$ {failing.command}\n"
                    f"exit code: {failing.exit_code}\n{failing.evidence}\n{FIX_RULES}")
    return Outcome(route="budget left", updates={
        "fix_attempts": attempts + 1,
        "fix_instructions": instructions,
        "last_failure_signature": signature,
        "fix_history": [*state.get("fix_history", []), f"fix attempt {attempts + 1}: {failing.name} failed ({failing.summary})"],
    })


def _first_failing_gate(state: dict[str, Any]) -> GateResult | None:
    by_name = {g["name"]: GateResult.model_validate(g) for g in state.get("gates", [])}
    for name in ("lint", "build", "tests"):
        gate = by_name.get(name)
        if gate and gate.failed:
            return gate
    return None


# -- handoff -----------------------------------------------------------------


def check_handoff(ctx: StageContext) -> Outcome:
    """The deterministic handoff gate: one retry with the list of problems."""
    from stepkit.protocol.handoff import handoff_problems, read_handoff

    gates = [GateResult.model_validate(g) for g in ctx.state.get("gates", [])]
    path = Path(str(ctx.state.get("handoff_path") or ""))
    try:
        problems = handoff_problems(ctx.pm, path, read_handoff(path), gates)
    except OSError as exc:
        problems = [f"handoff file {path} cannot be read: {exc.strerror or exc}"]
    checks = int(ctx.state.get("handoff_checks", 0)) + 1
    if not problems:
        return Outcome(route="schema valid", updates={"handoff_checks": checks, "handoff_feedback": []})
    if checks < 2:
        return Outcome(route="one retry", updates={"handoff_checks": checks, "handoff_feedback": problems})
    return Outcome(route="invalid twice", updates={
        "handoff_checks": checks,
        "handoff_feedback": problems,
        "failure_reason": "handoff failed validation twice: " + "; ".join(problems),
    })


# -- revision and faults -----------------------------------------------------


def revise_from_choice(ctx: StageContext) -> Outcome:
    """Free text at the final gate becomes the coder's fix instructions."""
    text = str(ctx.state.get("revision_choice") or "").strip()
    return Outcome(updates={
        "fix_instructions": f"Revision requested at the approval gate: {text}",
        "fix_history": [*ctx.state.get("fix_history", []), f"revision requested: {text}"],
    })


def note_llm_fault(ctx: StageContext) -> Outcome:
    """Distil the engine's failure text into a short fault note."""
    raw = str(ctx.state.get("fault_note") or ctx.state.get("failure_reason") or "unknown LLM fault")
    first_paragraph = raw.strip().split("\n\n", 1)[0]
    note = " ".join(first_paragraph.split())[:600]
    return Outcome(updates={"fault_note": note, "failure_reason": ctx.state.get("failure_reason") or "LLM stage fault"})


# -- end nodes ---------------------------------------------------------------


def gates_report(state: dict[str, Any]) -> list[str]:
    """One line per gate with its ACTUAL status; never "passed" for a gate that did not run."""
    by_name = {g["name"]: g for g in state.get("gates", [])}
    lines = []
    for name in GATE_ORDER:
        gate = by_name.get(name)
        if gate is None:
            lines.append(f"- {name}: NOT RUN (the run ended before this gate)")
        else:
            lines.append(f"- {GateResult.model_validate(gate).status_line()}")
    return lines


def _head(sentinel: str, state: dict[str, Any]) -> list[str]:
    lines = [sentinel, f"Step: {state.get('step', '?')} — {state.get('title', '')}".rstrip(" —")]
    if state.get("plan_path"):
        lines.append(f"Plan: {state['plan_path']}")
    return lines


def render_success(ctx: StageContext) -> str:
    """STEP_COMPLETE: the user approved; only now is the plan marked complete."""
    from stepkit.planrepo.edits import set_status

    state = ctx.state
    if state.get("plan_path"):
        set_status(Path(state["plan_path"]), "complete")
    lines = _head("STEP_COMPLETE", state)
    lines.append(f"Handoff: {state.get('handoff_path')}")
    lines.append("Gates:")
    lines.extend(gates_report(state))
    lines.append(f"Fix attempts: {state.get('fix_attempts', 0)} of {state.get('max_fix_attempts', 2)}")
    from stepkit.protocol.stages import pipeline_faults

    lines.extend(pipeline_faults(ctx))
    lines.append("")
    lines.append("Summary:")
    lines.append(str(state.get("step_summary") or "None"))
    lines.append("")
    lines.append("Downstream plan updates:")
    lines.append(_text(state.get("downstream_updates")))
    if state.get("applied_annotations"):
        lines.append("Edge cases added to later plans:")
        lines.extend(f"- step {a['step']}: {a['edge_case']}" for a in state["applied_annotations"])
    return "\n".join(lines)


def render_blocked(ctx: StageContext) -> str:
    """STEP_BLOCKED: dependencies unsatisfied and the user declined."""
    lines = _head("STEP_BLOCKED", ctx.state)
    lines.append("Unsatisfied dependencies:")
    lines.extend(f"- {reason}" for reason in ctx.state.get("unsatisfied") or ["None"])
    return "\n".join(lines)


def render_rejected(ctx: StageContext) -> str:
    """STEP_REJECTED: aborted at the deviation gate or the coder's approval gate."""
    state = ctx.state
    lines = _head("STEP_REJECTED", state)
    lines.append(f"Rejected at: {state.get('rejected_at') or 'the deviation gate'}")
    lines.append(f"Deviation summary: {state.get('deviation_summary') or 'None'}")
    lines.extend(_coder_lines(state))
    return "\n".join(lines)


def render_failure(ctx: StageContext) -> str:
    """STEP_FAILED: never an empty shell — reason, coder result, last gate output."""
    state = ctx.state
    lines = _head("STEP_FAILED", state)
    reason = state.get("failure_reason") or ("a pipeline stage faulted" if state.get("fault_note") else "unknown")
    lines.append(f"Reason: {reason}")
    if state.get("fault_note"):
        lines.append(f"Pipeline fault: {state['fault_note']}")
    lines.append(f"Fix attempts: {state.get('fix_attempts', 0)} of {state.get('max_fix_attempts', 2)}")
    lines.extend(_coder_lines(state))
    if state.get("gates"):
        lines.append("Gates:")
        lines.extend(gates_report(state))
        for gate in state["gates"]:
            if gate["name"] in ("build", "tests") and gate["status"] not in ("not_run",):
                lines.append(f"Last {gate['name']} output:")
                lines.append(_tail(gate.get("evidence") or ""))
    return "\n".join(lines)


def _coder_lines(state: dict[str, Any]) -> list[str]:
    """The tail of the coder's result, when there is one."""
    coder = (state.get("coder_result") or {}).get("text")
    return ["Coder result:", _tail(coder)] if coder else []


def _text(value: Any) -> str:
    if not value:
        return "None"
    if isinstance(value, list):
        return "\n".join(f"- {item}" for item in value)
    return str(value)


def _tail(text: str, lines: int = 40) -> str:
    parts = str(text).rstrip().splitlines()
    return "\n".join(parts[-lines:]) if parts else "None"
