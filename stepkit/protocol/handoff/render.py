"""Render a handoff from a stage's prose and the recorded gates.

The model writes prose only.  The Evidence section is built here from the
gate results the harness recorded and closed by a comment holding its digest
(:func:`evidence_digest`), so a handoff cannot claim a gate that did not run
and an Evidence edited afterwards is seen by
:func:`stepkit.protocol.handoff.check.check_handoff_text`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from stepkit.planrepo.sections import heading_of, track_fence
from stepkit.protocol import SENTINELS
from stepkit.records import GateResult
from stepkit.text import guard_lines, visible
from stepkit.workspace.localpaths import portable_text
from stepkit.workspace.redact import redact

#: The handoff's sections, all required, in this order.
HANDOFF_SECTIONS: tuple[str, ...] = (
    "Summary",
    "Completed",
    "Not completed",
    "Deviations",
    "Downstream plan updates",
    "Edge cases discovered",
    "Evidence",
    "Notes for next step",
)

#: The prose key of each section the model writes (Evidence is the harness's).
PROSE_KEYS: dict[str, str] = {
    "Summary": "summary",
    "Completed": "completed",
    "Not completed": "not_completed",
    "Deviations": "deviations",
    "Downstream plan updates": "downstream_plan_updates",
    "Edge cases discovered": "edge_cases_discovered",
    "Notes for next step": "notes_for_next_step",
}

SWEEP_FAULT = "PIPELINE-FAULT: edge-case sweep did not run"
REVIEW_FAULT = "PIPELINE-FAULT: independent review did not run"
#: The Evidence heading of the critical review findings left open.
OPEN_CRITICAL = "Critical review findings still open (review budget spent):"

#: The comment closing stepkit's Evidence: the digest of what it rendered there.
EVIDENCE_MARKER = "stepkit-evidence"
MARKER = re.compile(rf"<!-- {EVIDENCE_MARKER} sha256:([0-9a-f]{{64}}) -->")


def render_handoff(
    step: int,
    title: str,
    result: str,
    prose: Mapping[str, Any],
    gates: Sequence[GateResult | Mapping[str, Any]],
    faults: Sequence[str] = (),
    fix_history: Sequence[str] = (),
    changed_files: Sequence[str] = (),
    fix_attempts: int | None = None,
    max_fix_attempts: int | None = None,
    deviations: Sequence[str] = (),
    open_critical: Sequence[str] = (),
    criteria: str = "",
    project: Path | None = None,
) -> str:
    """Render a handoff file: frontmatter, then the eight sections in order.

    :param prose: the model's sections by key (``summary``, ``completed``,
        ``not_completed``, ``deviations``, ``downstream_plan_updates``,
        ``edge_cases_discovered``, ``notes_for_next_step``); empty ones
        become "None".  Headings inside prose are demoted so they cannot
        open a section of their own.
    :param gates: the recorded gate results (models or their dicts).
    :param faults: pipeline faults, e.g. :data:`SWEEP_FAULT`; a line not
        starting with ``PIPELINE-FAULT:`` gets that prefix.
    :param deviations: deviations the harness recorded (e.g. plan-repo edits
        by the coder that were undone); added to Deviations after the prose.
    :param fix_attempts: fix attempts used (with ``max_fix_attempts``, the
        budget) and ``fix_history``: the fix-loop record in Evidence.
    :param open_critical: critical review findings still open (the review
        budget was spent); listed in Evidence under :data:`OPEN_CRITICAL`,
        where :func:`check_handoff_text` finds them.
    :param criteria: the acceptance-criteria part of Evidence
        (:func:`stepkit.protocol.criteria.render_criteria`), after the gates.
    :param project: the project: its, its run store's and the home
        directory's absolute paths are left out of the file, which is
        committed (:func:`~stepkit.workspace.localpaths.portable_text`); the
        gates :func:`check_handoff_text` is given are then :func:`shown_gates`.
    :return: the file's text, secrets masked (the prose comes from any
        handoff plugin) and made :func:`~stepkit.text.visible` (a path, a
        test id, a title: no character of it moves or hides what a reader's
        terminal or viewer shows; a Latin-1 file name reads ``caf\\xe9.txt``).
        Evidence is built here from ``gates``, never from prose, and ends with the :data:`EVIDENCE_MARKER` comment (the digest
        :func:`check_handoff_text` compares).
    """
    fault_lines = [_fault_line(f) for f in faults if f and f.strip()]
    front = yaml.safe_dump(
        {"step": step, "title": title, "result": result}, sort_keys=False, allow_unicode=True
    )
    parts = [f"---\n{front}---\n"]
    for section in HANDOFF_SECTIONS:
        if section == "Evidence":
            # masked before the digest, so the digest covers the bytes written
            body = _evidence(
                gates,
                fault_lines,
                fix_history,
                changed_files,
                fix_attempts,
                max_fix_attempts,
                open_critical,
            )
            body = visible(
                _portable(redact(f"{body}\n\n{criteria}" if criteria else body), project)
            )
            body = f"{body}\n\n{evidence_marker(body)}"
        else:
            body = _prose(prose.get(PROSE_KEYS[section]))
            if section == "Deviations" and deviations:
                flagged = "\n".join(f"- Recorded by stepkit: {item}" for item in deviations)
                body = flagged if body == "None" else f"{body}\n\n{flagged}"
            if section == "Edge cases discovered":
                sweep = [line for line in fault_lines if line.startswith(SWEEP_FAULT)]
                if sweep:
                    body = "\n".join(sweep) + ("" if body == "None" else f"\n\n{body}")
        parts.append(f"\n## {section}\n\n{body}\n")
    return visible(_portable(redact("".join(parts)), project))


def _portable(text: str, project: Path | None) -> str:
    return text if project is None else portable_text(text, project)


def shown_gates(gates: Sequence[GateResult], project: Path) -> list[GateResult]:
    """``gates`` with their commands as a handoff rendered for ``project``
    shows them (what its Evidence is checked against)."""
    return [
        gate.model_copy(update={"command": portable_text(gate.command, project)})
        if gate.command
        else gate
        for gate in gates
    ]


def _fault_line(fault: str) -> str:
    fault = " ".join(fault.split())
    return fault if fault.startswith("PIPELINE-FAULT:") else f"PIPELINE-FAULT: {fault}"


def _prose(value: Any) -> str:
    """Normalise one prose section: lists become bullets, empty becomes None,
    ``#``/``##`` headings (as :func:`~stepkit.planrepo.sections.outline`
    reads them) are demoted to ``###`` outside code fences, and a
    fence left open is closed so it cannot swallow the sections after it."""
    if isinstance(value, (list, tuple)):
        value = "\n".join(f"- {item}" for item in value if str(item).strip())
    text = str(value or "").replace("\r\n", "\n").strip()
    if not text:
        return "None"
    text = guard_lines(text, SENTINELS)  # a model's text is never taken for an outcome line
    out, fence = [], None
    for line in text.split("\n"):
        fence = track_fence(line, fence)
        level_title = heading_of(line) if fence is None else None
        if level_title is not None and level_title[0] <= 2:
            line = f"### {level_title[1]}"
        out.append(line)
    if fence is not None:
        out.append(fence)
    return "\n".join(out)


def _evidence(
    gates: Sequence[GateResult | Mapping[str, Any]],
    fault_lines: Sequence[str],
    fix_history: Sequence[str],
    changed_files: Sequence[str],
    fix_attempts: int | None,
    max_fix_attempts: int | None,
    open_critical: Sequence[str] = (),
) -> str:
    blocks = ["Recorded by stepkit from the gate runs; not written by the model."]
    blocks.extend(fault_lines)
    if open_critical:
        blocks.append(
            OPEN_CRITICAL + "".join(f"\n- {' '.join(str(f).split())}" for f in open_critical)
        )
    for gate in (as_gate(g) for g in gates):
        blocks.append(_gate_block(gate))
    if fix_attempts is not None:
        budget = f" of {max_fix_attempts}" if max_fix_attempts is not None else ""
        history = "".join(f"\n- {item}" for item in fix_history)
        blocks.append(f"Fix attempts used: {fix_attempts}{budget}{history}")
    elif fix_history:
        blocks.append("Fix history:" + "".join(f"\n- {item}" for item in fix_history))
    if changed_files:
        blocks.append("Changed files:" + "".join(f"\n- `{name}`" for name in changed_files))
    return "\n\n".join(blocks)


def _gate_block(gate: GateResult) -> str:
    if not gate.ran:
        why = f" ({gate.summary.strip()})" if gate.summary.strip() else ""
        cmd = f"\n$ {gate.command}" if gate.command else ""
        return (
            f"### {gate.name} — NOT RUN\n\n"
            f"NOT RUN — this is NOT evidence that {gate.name} passed{why}.{cmd}"
        )
    lines = [f"### {gate.name} — {gate.status}", "", f"$ {gate.command}"]
    facts = [f"exit code: {exit_text(gate.exit_code)}", f"duration: {gate.duration_s:.1f} s"]
    if gate.plugin:
        facts.append(f"chosen by: {gate.plugin}")
    lines.append(" · ".join(facts))
    if gate.summary.strip():
        lines.append(f"summary: {gate.summary.strip()}")
    if gate.log:
        lines.append(f"full log: {gate.log}")
    evidence = gate.evidence.rstrip("\n")
    if evidence.strip():
        fence = "`" * max(3, _longest_backtick_run(evidence) + 1)
        lines += ["", f"{fence}text", evidence, fence]
    return "\n".join(lines)


def exit_text(code: int | None) -> str:
    return "none" if code is None else str(code)


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def as_gate(gate: GateResult | Mapping[str, Any]) -> GateResult:
    return gate if isinstance(gate, GateResult) else GateResult.model_validate(gate)


def evidence_marker(evidence: str) -> str:
    return f"<!-- {EVIDENCE_MARKER} sha256:{evidence_digest(evidence)} -->"


def evidence_digest(evidence: str) -> str:
    return hashlib.sha256(evidence.strip().encode("utf-8", "surrogateescape")).hexdigest()
