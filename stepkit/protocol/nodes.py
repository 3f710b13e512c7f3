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
verify_format_lint     ``pass`` · ``fail`` · ``error``
verify_build           ``pass`` · ``fail`` · ``error``
verify_tests           ``pass`` · ``fail`` · ``error``
fix_loop_gate          ``budget left`` · ``budget spent``
route_sweep            ``5+ files or boundary`` · ``else``
route_review           ``🔴 critical findings`` · ``else``
check_handoff          ``schema valid`` · ``one retry`` · ``invalid twice``
revise_from_choice     (next)
note_llm_fault         (next)
=====================  =====================================================

Routers are functions of the state and the switches the run started with
(route_coder_result also reads the files the step changed, to tell whether
the round changed anything); the verify nodes run the gates.  The harness,
never a model, decides what passed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from stepkit.protocol.switches import switch_on
from stepkit.records import GATE_ORDER, GateResult, Outcome, StageContext, one_line

CRITICAL = "🔴"
#: The sentinels that open stepkit's output (first line only).
SENTINELS = ("STEP_COMPLETE", "STEP_BLOCKED", "STEP_REJECTED", "STEP_FAILED")
REVIEW_FILE_THRESHOLD = 5
FIX_RULES = "Make the minimal fix, no refactoring. Regressions caused by this change are in scope."


# -- resolve -----------------------------------------------------------------


def resolve_step(ctx: StageContext) -> Outcome:
    """Find the step, load its plan, previous handoff and NOTES.md, check deps."""
    from stepkit.errors import PlanError
    from stepkit.planrepo.model import PlanRepo
    from stepkit.planrepo.sections import plan_section

    try:
        repo = PlanRepo.load(ctx.plans_dir)
        step = repo.resolve(str(ctx.state.get("step_request") or "next"), str(ctx.state.get("prompt") or ""))
    except PlanError as exc:
        return _error(str(exc))
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
    """Read the coder's sentinel; anything but CODER_COMPLETE ends the run.
    Each round is recorded in ``coder_rounds`` (:func:`_coder_round`)."""
    result = ctx.state.get("coder_result") or {}
    sentinel = result.get("sentinel")
    rounds = _coder_round(ctx)
    if sentinel == "CODER_COMPLETE":
        return Outcome(route="CODER_COMPLETE", updates=rounds)
    if sentinel == "CODER_REJECTED":
        # end_failure ends a run with rejected_at set as STEP_REJECTED (see step_runner.yaml)
        return Outcome(route="REJECTED / FAILED",
                       updates={**rounds, "rejected_at": "the coder's own plan-approval gate"})
    return Outcome(route="REJECTED / FAILED", updates={**rounds, "failure_reason": _coder_failure(result)})


def _coder_failure(result: dict[str, Any]) -> str:
    """Why a coder result that is neither complete nor rejected ends the run."""
    if result.get("sentinel") != "CODER_FAILED":
        return "no recognizable sentinel in the coder's output"
    if not result.get("sentinel_inferred"):
        return "coder fix-loop exhausted"
    code = result.get("exit_code")
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
    state = ctx.state
    rounds = list(state.get("coder_rounds") or [])
    number = len(rounds) + 1
    why = "the step"
    if number > 1:
        asked = str(state.get("fix_instructions") or "").strip().splitlines() or ["(no instructions)"]
        why = f'"{one_line(asked[0])[:100]}"'
    changed = state.get("changed_files")
    tree = _fingerprint(ctx.project_dir, changed) if changed is not None else None
    if changed is None:
        what = "its changes are unknown (no scope snapshot)"
    elif number == 1 and not changed:
        what = "CHANGED NOTHING: no file outside the plan repo differs from the step's start"
    elif number > 1 and tree == state.get("coder_tree"):
        what = f"CHANGED NOTHING: no file outside the plan repo differs from after round {number - 1}"
    elif number == 1:
        what = f"changed {len(changed)} file(s)"
    else:
        what = f"changed the tree ({len(changed)} file(s) differ from the step's start)"
    return {"coder_rounds": [*rounds, f"round {number} ({why}): {what}"], "coder_tree": tree}


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
    many_files = len(ctx.state.get("changed_files") or []) >= REVIEW_FILE_THRESHOLD
    if many_files or ctx.state.get("needs_independent_review") or ctx.state.get("tamper_flags"):
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
    critical = critical_findings(str(state.get("review_report") or ""))
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
            "fix_history": [f"review fix {attempts + 1}: {len(critical)} critical finding(s)"],
        },
    )


def critical_findings(report: str) -> list[str]:
    """The lines of a review that are critical findings: those that START
    with 🔴 once list markers (``-``, ``*``, ``+``, ``1.``, ``1)``) and blanks
    are set aside, so "No 🔴 critical findings." is none."""
    found = []
    for line in report.splitlines():
        text = _LIST_MARKER.sub("", line.strip())
        if text.startswith(CRITICAL):
            found.append(line.strip())
    return found


_LIST_MARKER = re.compile(r"^(?:(?:[-*+]|\d+[.)])\s*)+")


# -- gates -------------------------------------------------------------------


def verify_format_lint(ctx: StageContext) -> Outcome:
    """Format first (recorded, never fails the step), then lint."""
    runner = _gate_runner(ctx, watch_format=True)
    results, updates = _run_guarded(ctx, runner, ("format", "lint"))
    updates["format_changed_tree"] = runner.format_changed_tree
    return _gate_route(results[-1], updates)


def verify_build(ctx: StageContext) -> Outcome:
    """Build or type-check; no command is NOT RUN and the step goes on."""
    return _single_gate(ctx, "build")


def verify_tests(ctx: StageContext) -> Outcome:
    """The FULL test suite, not only the new tests."""
    return _single_gate(ctx, "tests")


def _single_gate(ctx: StageContext, name: str) -> Outcome:
    runner = _gate_runner(ctx, format_changed_tree=bool(ctx.state.get("format_changed_tree")))
    (result,), updates = _run_guarded(ctx, runner, (name,))
    return _gate_route(result, updates)


def _gate_route(result: GateResult, updates: dict[str, Any]) -> Outcome:
    """``pass`` (a pass, or NOT RUN: the step goes on, the gate marked NOT RUN
    everywhere), ``fail`` (the fix loop), or ``error``: an environment fault
    ends the run without spending a fix attempt — no coder can fix the machine."""
    if result.status == "error":
        return Outcome(route="error", updates={**updates, "failure_reason": environment_fault_reason(result)})
    return Outcome(route="fail" if result.failed else "pass", updates=updates)


def environment_fault_reason(gate: GateResult) -> str:
    """``Environment fault: <gate>: <cause>`` and what the user can do about it."""
    from stepkit.plugins.overrides import OVERRIDES

    variable, key = OVERRIDES[gate.name]
    return (
        f"Environment fault: {gate.name}: {gate.summary or 'the command could not run'}. "
        f"This is the machine, not the code: no fix attempt was spent. Install what is missing "
        f"(or make it reachable), or set the {gate.name} command ({variable}, or {key} = \"…\" under "
        f"[tool.stepkit.commands] in pyproject.toml, [commands] in stepkit.toml, or stepconf.py), "
        f"then run the step again."
    )


def _run_guarded(ctx: StageContext, runner: Any, names: tuple[str, ...]) -> tuple[list[GateResult], dict[str, Any]]:
    """Run gates one by one with the plan repo held: what a gate does to it (a
    formatter that also formats markdown, a test that writes there) is undone
    before the next gate, every displaced file kept in the run dir, and the
    gate named in ``scope_deviations`` and ``gates_edited_plan_repo``."""
    from stepkit.protocol.stages import undo_plan_edits
    from stepkit.workspace.scope import copy_plan_repo

    results, deviations, edited = [], [], []
    # one copy serves every gate: after each, the plan repo is put back to it
    before = copy_plan_repo(ctx.project_dir, ctx.plans_dir)
    for name in names:
        (result,) = runner.run((name,))
        undone = undo_plan_edits(ctx, before, name).get("scope_deviations", [])
        results.append(result)
        deviations += undone
        edited += [name] if undone else []
    updates = _merge_gates(ctx.state, results)
    if edited:
        updates["scope_deviations"] = deviations
        updates["gates_edited_plan_repo"] = sorted({*ctx.state.get("gates_edited_plan_repo", []), *edited})
    return results, updates


def _gate_runner(ctx: StageContext, **options: Any):
    """The step's gate runner: each result is a ``gate`` event of the run, and
    the coder's own passing gates may stand in for a gate on the same bytes.
    It runs the commands the run fixed at its first gate, and the formatter
    gets the coder's changes since the step started."""
    from stepkit.workspace.gate_commands import run_gate_plan
    from stepkit.workspace.gates import GateRunner, existing_files

    coder_gates = (ctx.state.get("coder_result") or {}).get("gates", [])
    reusable = [GateResult.model_validate(raw) for raw in coder_gates] if ctx.config.reuse_coder_evidence else []
    changed = ctx.state.get("changed_files")  # absent without a scope snapshot: the changes against HEAD
    return GateRunner(
        ctx.pm, ctx.project_dir, ctx.config, ctx.log_dir(),
        plan=run_gate_plan(ctx.settings, ctx.pm, ctx.project_dir, ctx.config),
        change_set=None if changed is None else lambda: existing_files(ctx.project_dir, changed),
        held_plans_dir=ctx.plans_dir,  # _run_guarded restores the plan repo and flags the gate
        on_gate=lambda result: ctx.emit("gate", **result.model_dump(exclude={"evidence"})),
        on_reused=lambda result, tree: ctx.emit("gate_reused", gate=result.name, tree_hash=tree),
        reusable=reusable, reused_from="the coder's own gate", baseline=lambda: _start_tree(ctx), **options,
    )


def _start_tree(ctx: StageContext):
    """The tree the step started from, for the gates' baseline (None: the
    run kept no step-start snapshot, or it was altered)."""
    from stepkit.protocol.stages import _scope_path
    from stepkit.workspace.baseline import snapshot_tree
    from stepkit.workspace.scope import load_snapshot

    path = _scope_path(ctx)
    if path is None:
        return None
    snapshot = load_snapshot(path, ctx.state.get("scope_snapshot_digest"))
    return snapshot_tree(snapshot) if snapshot is not None else None


def _merge_gates(state: dict[str, Any], results: list[GateResult]) -> dict[str, Any]:
    """Replace the latest record of each gate; add every run to gate_history
    (which the graph appends to)."""
    latest = {g["name"]: g for g in state.get("gates", [])}
    for result in results:
        latest[result.name] = result.model_dump()
    ordered = [latest[name] for name in GATE_ORDER if name in latest]
    return {"gates": ordered, "gate_history": [r.model_dump(exclude={"evidence"}) for r in results]}


def fix_loop_gate(ctx: StageContext) -> Outcome:
    """Spend one step-level fix attempt on the first failing gate, or stop.

    A failure whose signature repeats after a fix attempt ends the loop at
    once ("no progress") instead of spending the rest of the budget."""
    from stepkit.workspace.stall import failure_signature, is_stalled
    from stepkit.workspace.verdicts import evidence_for_fix

    state = ctx.state
    failing = _first_failing_gate(state)
    if failing is None:  # only a custom graph can get here without a failing gate
        return Outcome(route="budget spent", updates={"failure_reason": "fix loop entered with no failing gate"})
    attempts = int(state.get("fix_attempts", 0))
    budget = int(state.get("max_fix_attempts", 2))
    # what the coder is asked to fix (the new failures), not the baseline's notes
    fix_evidence = evidence_for_fix(failing)
    signature = failure_signature(failing.model_copy(update={"evidence": fix_evidence}))
    if is_stalled(state.get("last_failure_signature"), signature):
        return Outcome(route="budget spent", updates={
            "failure_reason": f"no progress: the {failing.name} gate failed the same way after fix attempt {attempts}",
        })
    if attempts >= budget:
        return Outcome(route="budget spent", updates={
            "failure_reason": f"fix budget spent: {attempts} of {budget} fix attempts used and the {failing.name} gate still fails",
        })
    # condensed evidence starts with its own "$ command" / "exit code" lines
    header = [line for line in (f"$ {failing.command}", f"exit code: {failing.exit_code}")
              if line not in fix_evidence.split("\n")]
    instructions = "\n".join([f"The {failing.name} gate failed after your change.", *header,
                              fix_evidence, FIX_RULES])
    return Outcome(route="budget left", updates={
        "fix_attempts": attempts + 1,
        "fix_instructions": instructions,
        "last_failure_signature": signature,
        "fix_history": [f"fix attempt {attempts + 1}: {failing.name} failed ({failing.summary})"],
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
    problems += _criteria_problems(ctx.state, gates)
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


def _criteria_problems(state: dict[str, Any], gates: list[GateResult]) -> list[str]:
    """The acceptance-criteria map the handoff writer gave, checked against
    the plan and the final tests gate (:mod:`stepkit.protocol.criteria`)."""
    from stepkit.protocol.criteria import criteria_problems, final_tests_gate, plan_criteria

    criteria = plan_criteria(str(state.get("plan_text") or ""))
    return criteria_problems(criteria, state.get("acceptance_criteria"), final_tests_gate(gates))


# -- revision and faults -----------------------------------------------------


def revise_from_choice(ctx: StageContext) -> Outcome:
    """Free text at the final gate becomes the coder's fix instructions."""
    text = str(ctx.state.get("revision_choice") or "").strip()
    return Outcome(updates={
        "fix_instructions": f"Revision requested at the approval gate: {text}",
        "fix_history": [f"revision requested: {text}"],
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
    if state.get("step_choice"):
        lines.append(f"Chosen: {state['step_choice']}")
    if state.get("plan_path"):
        lines.append(f"Plan: {state['plan_path']}")
    if state.get("kept_handoff"):
        lines.append(f"Previous handoff kept at: {state['kept_handoff']}")
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
    lines.extend(_flag_lines(state))
    lines.append("")
    lines.append("Summary:")
    lines.append(str(state.get("step_summary") or "None"))
    lines.append("")
    lines.append("Downstream plan updates:")
    lines.append(_text(state.get("downstream_updates")))
    if state.get("applied_annotations"):
        lines.append("Edge cases added to later plans:")
        lines.extend(f"- step {a['step']}: {a['edge_case']}" for a in state["applied_annotations"])
    from stepkit.protocol.commit_hint import commit_hint

    lines.extend(commit_hint(state, ctx.project_dir))
    return _output(lines)


def render_blocked(ctx: StageContext) -> str:
    """STEP_BLOCKED: dependencies unsatisfied and the user declined."""
    lines = _head("STEP_BLOCKED", ctx.state)
    lines.append("Unsatisfied dependencies:")
    lines.extend(f"- {reason}" for reason in ctx.state.get("unsatisfied") or ["None"])
    return _output(lines)


def render_rejected(ctx: StageContext) -> str:
    """STEP_REJECTED: aborted at the deviation gate or the coder's approval gate."""
    state = ctx.state
    lines = _head("STEP_REJECTED", state)
    lines.append(f"Rejected at: {state.get('rejected_at') or 'the deviation gate'}")
    lines.append(f"Deviation summary: {state.get('deviation_summary') or 'None'}")
    lines.extend(_flag_lines(state))
    lines.extend(_coder_lines(state))
    return _output(lines)


def render_failure(ctx: StageContext) -> str:
    """STEP_FAILED: never an empty shell — reason, coder result, last gate output."""
    state = ctx.state
    lines = _head("STEP_FAILED", state)
    reason = state.get("failure_reason") or ("a pipeline stage faulted" if state.get("fault_note") else "unknown")
    lines.append(f"Reason: {reason}")
    if state.get("fault_note"):
        lines.append(f"{_fault_label(ctx)}: {state['fault_note']}")
    lines.append(f"Fix attempts: {state.get('fix_attempts', 0)} of {state.get('max_fix_attempts', 2)}")
    lines.extend(_flag_lines(state))
    lines.extend(_coder_lines(state))
    if state.get("gates"):
        lines.append("Gates:")
        lines.extend(gates_report(state))
        for gate in state["gates"]:
            if gate["name"] in ("build", "tests") and gate["status"] not in ("not_run",):
                lines.append(f"Last {gate['name']} output:")
                lines.append(_quoted(gate.get("evidence") or ""))
    return _output(lines)


def _fault_label(ctx: StageContext) -> str:
    """``Coder failure`` when the node that faulted ran the coder, else
    ``Pipeline fault`` (an LLM stage or another node)."""
    node = ctx.state.get("last_fault_node")
    coder_nodes = (ctx.settings.get("stage_nodes") or {}).get("implement") or ()
    return "Coder failure" if node in coder_nodes else "Pipeline fault"


def _flag_lines(state: dict[str, Any]) -> list[str]:
    """Every tamper flag and scope deviation the harness recorded."""
    lines = []
    for key, title in (("tamper_flags", "Tamper flags (signs that verification was weakened):"),
                       ("scope_deviations", "Scope deviations (recorded by stepkit):")):
        if state.get(key):
            lines.append(title)
            lines.extend(f"- {item}" for item in state[key])
    return lines


def _coder_lines(state: dict[str, Any]) -> list[str]:
    """The tail of the coder's result, quoted, when there is one."""
    coder = (state.get("coder_result") or {}).get("text")
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
    """An end node's output: no line but the first (the sentinel) starts with
    a sentinel, wherever the text came from (a model's summary, a path)."""
    guarded = lines[:1] + [f"> {line}" if line.lstrip().startswith(SENTINELS) else line
                           for line in "\n".join(lines[1:]).split("\n")]
    return "\n".join(guarded)
