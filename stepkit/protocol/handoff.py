"""Handoff files: render them from a stage's prose and the recorded gates,
check them against the protocol's schema, and append durable facts to NOTES.md.

The model writes prose only.  The Evidence section is built here from the
gate results the harness recorded, so a handoff cannot claim a gate that did
not run, and :func:`check_handoff_text` verifies that a handoff (ours or one
written by hand) agrees with those records.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from stepkit.planrepo.document import DocumentError, parse_document
from stepkit.planrepo.sections import track_fence
from stepkit.records import GateResult
from stepkit.workspace.files import atomic_write
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

RESULTS: tuple[str, ...] = ("complete", "partial", "blocked")
SWEEP_FAULT = "PIPELINE-FAULT: edge-case sweep did not run"
REVIEW_FAULT = "PIPELINE-FAULT: independent review did not run"

_HEADING = re.compile(r"^##[ \t]+(.+?)[ \t]*#*[ \t]*$")
_PASS_WORDS = re.compile(r"\b(pass|passed|passes|passing|succeeded|successful)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(not|never|no|without|skipped)\b|n't\b", re.IGNORECASE)
_GATE_WORDS = {
    "format": r"\bformat(ter|ting)?\b",
    "lint": r"\blint(er|ing)?\b",
    "build": r"\bbuild\b",
    "tests": r"\btests?\b|\btest suite\b",
}


# -- rendering ---------------------------------------------------------------


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
    :return: the file's text, secrets masked (the prose comes from any
        handoff plugin).  Evidence is built here from ``gates``, never from prose.
    """
    fault_lines = [_fault_line(f) for f in faults if f and f.strip()]
    front = yaml.safe_dump(
        {"step": step, "title": title, "result": result}, sort_keys=False, allow_unicode=True
    )
    parts = [f"---\n{front}---\n"]
    for section in HANDOFF_SECTIONS:
        if section == "Evidence":
            body = _evidence(gates, fault_lines, fix_history, changed_files, fix_attempts,
                             max_fix_attempts)
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
    return redact("".join(parts))


def _fault_line(fault: str) -> str:
    fault = " ".join(fault.split())
    return fault if fault.startswith("PIPELINE-FAULT:") else f"PIPELINE-FAULT: {fault}"


def _prose(value: Any) -> str:
    """Normalise one prose section: lists become bullets, empty becomes None,
    ``#``/``##`` headings are demoted to ``###`` outside code fences, and a
    fence left open is closed so it cannot swallow the sections after it."""
    if isinstance(value, (list, tuple)):
        value = "\n".join(f"- {item}" for item in value if str(item).strip())
    text = str(value or "").replace("\r\n", "\n").strip()
    if not text:
        return "None"
    out, fence = [], None
    for line in text.split("\n"):
        fence = track_fence(line, fence)
        if fence is None and re.match(r"^#{1,2}\s", line):
            line = "### " + line.lstrip("#").lstrip()
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
) -> str:
    blocks = ["Recorded by stepkit from the gate runs; not written by the model."]
    blocks.extend(fault_lines)
    for gate in (_as_gate(g) for g in gates):
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
    facts = [f"exit code: {_exit_text(gate.exit_code)}", f"duration: {gate.duration_s:.1f} s"]
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


def _exit_text(code: int | None) -> str:
    return "none" if code is None else str(code)


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def _as_gate(gate: GateResult | Mapping[str, Any]) -> GateResult:
    return gate if isinstance(gate, GateResult) else GateResult.model_validate(gate)


# -- checking ----------------------------------------------------------------


def read_handoff(path: Path) -> str:
    """The handoff's text.

    :raises OSError: it cannot be read (``strerror`` says why), also when it
        is not UTF-8.
    """
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise OSError(0, "not UTF-8 text") from None


def handoff_problems(pm: Any, path: Path, text: str, gates: Sequence[GateResult] = ()) -> list[str]:
    """Every ``stepkit_check_handoff`` plugin's problems with a handoff (collect-all)."""
    answers = pm.hook.stepkit_check_handoff(path=path, text=text, gates=list(gates))
    return [problem for answer in answers for problem in (answer or [])]


def check_handoff_text(text: str, gates: Sequence[GateResult | Mapping[str, Any]] = ()) -> list[str]:
    """Check a handoff against the protocol's schema and the recorded gates.

    Checks: the frontmatter parses and ``result`` is complete, partial or
    blocked; all eight sections are present (``## `` headings, names
    case-insensitive), once each and not empty; every recorded gate that ran
    has its command and exit code in Evidence; a gate that did not run is
    marked NOT RUN there and no line outside code blocks pairs it with
    "passed".  With no recorded gates (outside a run) the Evidence is checked
    for shape: not empty, and gates it marks NOT RUN are not called passing.

    :return: one-line problems; empty when the handoff is valid.
    """
    text = text.replace("\r\n", "\n").removeprefix("\ufeff")
    problems, body = _check_frontmatter(text)
    sections, duplicates = split_sections(body)
    problems += [f"section '## {name}' appears more than once" for name in duplicates]
    for name in HANDOFF_SECTIONS:
        content = sections.get(name.lower())
        if content is None:
            problems.append(f"missing section '## {name}'")
        elif not content.strip():
            problems.append(f"section '## {name}' is empty (write None when there is nothing)")
    evidence = sections.get("evidence")
    if evidence is None:
        return problems
    records = [_as_gate(g) for g in gates]
    if records:
        problems += _check_gates_against_evidence(records, evidence)
        not_run = [g.name for g in records if not g.ran]
    else:
        if evidence.strip().lower() in ("", "none", "none."):
            problems.append("Evidence records no gate: list each command with its exit code, "
                            "or NOT RUN")
        not_run = [name for name in _GATE_WORDS if _marked_not_run(name, evidence)]
    problems += _check_not_run_claims(not_run, body)
    return problems


def split_sections(body: str) -> tuple[dict[str, str], list[str]]:
    """Split markdown into its ``## `` sections (headings inside code fences
    ignored).  Returns ``{lowercased name: content}`` and the names seen twice."""
    sections: dict[str, str] = {}
    duplicates: list[str] = []
    current: str | None = None
    buffer: list[str] = []
    fence = None
    for line in body.split("\n"):
        was_in_fence = fence is not None
        fence = track_fence(line, fence)
        match = None if was_in_fence else _HEADING.match(line)
        if match:
            if current is not None:
                sections[current] = "\n".join(buffer)
            current, buffer = match.group(1).strip().lower(), []
            if current in sections:
                duplicates.append(match.group(1).strip())
        elif current is not None:
            buffer.append(line)
    if current is not None:
        sections[current] = "\n".join(buffer)
    return sections, duplicates


def _check_frontmatter(text: str) -> tuple[list[str], str]:
    """Return the frontmatter problems and the body after the frontmatter."""
    if not text.lstrip("\ufeff").lstrip().startswith("---"):
        return ["frontmatter missing: the file must start with a '---' block (step, title, result)"], text
    try:
        data, body = parse_document(text)
    except DocumentError as exc:
        return [str(exc)], text
    result = data.get("result")
    if result is None:
        return ["frontmatter has no 'result' (expected complete, partial or blocked)"], body
    if str(result).strip() not in RESULTS:
        return [f"frontmatter result is {result!r}; expected complete, partial or blocked"], body
    return [], body


def _check_gates_against_evidence(gates: Sequence[GateResult], evidence: str) -> list[str]:
    problems = []
    commands = [g.command for g in gates if g.ran and g.command]
    for gate in gates:
        if not gate.ran:
            if not _marked_not_run(gate.name, evidence):
                problems.append(f"Evidence does not mark the {gate.name} gate as NOT RUN "
                                f"(it did not run)")
            continue
        if not gate.command or gate.command not in evidence:
            problems.append(f"Evidence lacks the {gate.name} gate's command: {gate.command}")
            continue
        if not _exit_code_near(evidence, gate.command, gate.exit_code, commands):
            problems.append(f"Evidence lacks the {gate.name} gate's exit code "
                            f"({_exit_text(gate.exit_code)}) next to its command")
    return problems


def _exit_code_near(evidence: str, command: str, code: int | None, commands: Sequence[str]) -> bool:
    """Is the exit code stated after some occurrence of the command, before the
    next gate command begins?"""
    value = r"(none|timed out)" if code is None else rf"{code}(?!\d)"
    pattern = re.compile(rf"exit(?:[ _-]?code)?\s*[:=]?\s*{value}", re.IGNORECASE)
    for match in re.finditer(re.escape(command), evidence):
        start = match.end()
        ends = [evidence.find(other, start) for other in commands if other != command]
        ends = [pos for pos in ends if pos != -1]
        block = evidence[start:min(ends)] if ends else evidence[start:]
        if pattern.search(block):
            return True
    return False


def _marked_not_run(gate: str, evidence: str) -> bool:
    """Does a line of Evidence name the gate and say "not run"?"""
    return any(re.search(_GATE_WORDS[gate], line, re.IGNORECASE) and "not run" in line.lower()
               for line in evidence.split("\n"))


def _check_not_run_claims(not_run: Iterable[str], body: str) -> list[str]:
    """A line (outside code blocks) that names a not-run gate and says it
    passed, without a negation, is a false claim."""
    problems = []
    lines, fence = [], None
    for line in body.split("\n"):
        was_in_fence = fence is not None
        fence = track_fence(line, fence)
        if not was_in_fence and fence is None:
            lines.append(line)
    for name in not_run:
        for line in lines:
            if (re.search(_GATE_WORDS[name], line, re.IGNORECASE) and _PASS_WORDS.search(line)
                    and not _NEGATION.search(line)):
                problems.append(f"the {name} gate did not run but this line says it passed: "
                                f"{line.strip()[:160]}")
                break
    return problems


# -- files -------------------------------------------------------------------


def append_notes(notes_path: Path, facts: Sequence[str], step: int) -> list[str]:
    """Append durable facts to NOTES.md, never rewriting what is there.

    Creates the file with a ``# Notes`` header when missing.  A fact already
    present (whitespace and case ignored) is skipped; each new fact becomes
    one bullet ``- <fact> (step N)``.  The existing bytes stay an exact
    prefix of the new file, written atomically; the file's line ending
    (LF or CRLF) is kept.

    :return: the facts that were appended.
    """
    notes_path = Path(notes_path)
    existing = notes_path.read_bytes() if notes_path.exists() else b""
    text = existing.decode("utf-8", errors="replace")
    newline = "\r\n" if "\r\n" in text else "\n"
    seen = _norm(text)
    added: list[str] = []
    for fact in facts:
        one_line = redact(" ".join(str(fact).split()))
        one_line = one_line.removeprefix("- ")
        if not one_line or _norm(one_line) in seen:
            continue
        seen += "\n" + _norm(one_line)
        added.append(one_line)
    if not added:
        return []
    prefix = "" if existing else f"# Notes{newline}{newline}"
    if existing and not text.endswith(("\n", "\r")):
        prefix = newline
    addition = prefix + "".join(f"- {fact} (step {step}){newline}" for fact in added)
    notes_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(notes_path, existing + addition.encode("utf-8"))
    return added


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()
