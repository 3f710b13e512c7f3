"""Check a handoff against the protocol's schema and the recorded gates.

:func:`check_handoff_text` verifies that a handoff (stepkit's or one written
by hand) has its frontmatter and its eight sections, that its Evidence is
the one stepkit rendered and agrees with the recorded gates, and that no
sentence of it says a gate passed when the records say it did not
(:mod:`stepkit.protocol.handoff.claims`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stepkit.planrepo.checks import check_result
from stepkit.planrepo.document import DocumentError, parse_document
from stepkit.planrepo.sections import Outline, outline
from stepkit.protocol.handoff.claims import GATE_WORDS, false_pass_claims
from stepkit.protocol.handoff.render import (
    EVIDENCE_MARKER,
    HANDOFF_SECTIONS,
    MARKER,
    OPEN_CRITICAL,
    as_gate,
    evidence_digest,
    exit_text,
)
from stepkit.records import GateResult

_NOT_RUN_LINE = re.compile(r"^.*not run.*$", re.IGNORECASE | re.MULTILINE)
#: the title of a gate's heading in Evidence: ``<gate> — <status>``
_STATUS_TITLE = re.compile(r"(format|lint|build|tests)[ \t]+[—–-]+[ \t]+(.+?)[ \t]*", re.IGNORECASE)


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


def check_handoff_text(
    text: str, gates: Sequence[GateResult | Mapping[str, Any]] = ()
) -> list[str]:
    """Check a handoff against the protocol's schema and the recorded gates.

    Checks: the frontmatter parses and ``result`` is exactly complete,
    partial or blocked (:func:`~stepkit.planrepo.checks.check_result`); all
    eight sections are present (``## `` headings, names case-insensitive),
    once each and not empty; the Evidence section is the one stepkit rendered
    (its marker's digest matches; in a run it must carry one); every recorded
    gate that ran has its command and exit code in Evidence; a gate that did
    not run is marked NOT RUN there; and no sentence outside code blocks (and
    outside stepkit's own Evidence) says that a gate passed when it did not;
    and ``result: complete`` is refused while a gate failed or stepkit's
    Evidence lists critical review findings still open.  With no recorded gates (outside a run) the Evidence is checked for shape
    and tells which gates did not pass.

    :return: one-line problems; empty when the handoff is valid.
    """
    text = text.replace("\r\n", "\n").removeprefix("\ufeff")
    problems, body, result = _check_frontmatter(text)
    found = outline(body)
    problems += [f"section '## {name}' appears more than once" for name in _duplicates(found)]
    sections = {name: found.find(name, levels=(2,), last=True) for name in HANDOFF_SECTIONS}
    for name, heading in sections.items():
        if heading is None:
            problems.append(f"missing section '## {name}'")
        elif not found.content(heading).strip():
            problems.append(f"section '## {name}' is empty (write None when there is nothing)")
    evidence_heading = sections["Evidence"]
    if evidence_heading is None:
        return problems
    evidence = found.content(evidence_heading)
    records = [as_gate(g) for g in gates]
    rendered = _rendered_by_stepkit(evidence)
    if rendered is False:
        problems.append(
            "the Evidence section is not the one stepkit rendered: it was changed after rendering"
        )
    elif rendered is None:
        problems.append(
            "the Evidence section was not rendered by stepkit "
            f"(its {EVIDENCE_MARKER} marker is missing)"
        )
    if records:
        problems += _check_gates_against_evidence(records, evidence)
        not_passed: dict[str, str] = {g.name: g.status for g in records if g.status != "pass"}
        # a gate passed on the baseline rule still had failing tests: never "passed" in prose
        not_passed.update(
            {
                g.name: "its failures are PRE-EXISTING or FLAKY, not passing"
                for g in records
                if g.status == "pass" and (g.preexisting_failures or g.flaky)
            }
        )
        failed: list[str] = [g.name for g in records if g.failed]
    else:
        if evidence.strip().lower() in ("", "none", "none."):
            problems.append(
                "Evidence records no gate: list each command with its exit code, or NOT RUN"
            )
        not_passed = _statuses_in_evidence(evidence)
        failed = [
            name for name, status in not_passed.items() if status not in ("not_run", "not run")
        ]
        if rendered:  # in a run, the check_handoff node checks the map against the records
            from stepkit.protocol.criteria import rendered_criteria_problems

            problems += rendered_criteria_problems(evidence)
    if result == "complete":
        problems += _complete_contradicted(failed, evidence if rendered else "")
    if not_passed:
        skipped = [(evidence_heading.start, evidence_heading.end)] if rendered else []
        problems += false_pass_claims(not_passed, found.without(skipped))
    return problems


def split_sections(body: str) -> tuple[dict[str, str], list[str]]:
    """Split markdown into its ``## `` sections (headings inside code fences
    ignored).  Returns ``{name: content}`` (names as
    :func:`~stepkit.planrepo.sections.section_key` matches them; the last
    section of a name wins) and the names seen twice."""
    found = outline(body)
    return {h.key: found.content(h) for h in found.headings if h.level == 2}, _duplicates(found)


def _duplicates(found: Outline) -> list[str]:
    """The ``## `` sections whose name an earlier one already had."""
    seen: set[str] = set()
    duplicates = []
    for heading in (h for h in found.headings if h.level == 2):
        if heading.key in seen:
            duplicates.append(heading.title.strip())
        seen.add(heading.key)
    return duplicates


def _check_frontmatter(text: str) -> tuple[list[str], str, str | None]:
    """Return the frontmatter problems, the body after the frontmatter and
    the valid ``result`` (None when it is missing or invalid)."""
    if not text.lstrip("\ufeff").lstrip().startswith("---"):
        return (
            ["frontmatter missing: the file must start with a '---' block (step, title, result)"],
            text,
            None,
        )
    try:
        data, body = parse_document(text)
    except DocumentError as exc:
        return [str(exc)], text, None
    result = data.get("result")
    if result is None:
        return ["frontmatter has no 'result' (expected complete, partial or blocked)"], body, None
    if check_result(result)[1]:
        return (
            [f"frontmatter result is {result!r}; expected complete, partial or blocked"],
            body,
            None,
        )
    return [], body, result


def _complete_contradicted(failed: Sequence[str], evidence: str) -> list[str]:
    """``result: complete`` said of a step whose gate failed, or whose
    stepkit-rendered Evidence lists critical review findings still open."""
    problems = [f"result is complete but the {name} gate failed: use partial" for name in failed]
    if OPEN_CRITICAL in evidence:
        problems.append(
            "result is complete but critical review findings are still open: use partial"
        )
    return problems


def _rendered_by_stepkit(evidence: str) -> bool | None:
    """True: the Evidence is byte for byte what stepkit rendered; False: it
    carries stepkit's marker but was changed; None: it carries no marker."""
    content = evidence.rstrip()
    cut = content.rfind("\n") + 1
    marker = MARKER.fullmatch(content[cut:].strip())
    if marker is None:
        return None
    return marker.group(1) == evidence_digest(content[:cut])


def _check_gates_against_evidence(gates: Sequence[GateResult], evidence: str) -> list[str]:
    problems = []
    commands = [g.command for g in gates if g.ran and g.command]
    for gate in gates:
        if not gate.ran:
            if not _marked_not_run(gate.name, evidence):
                problems.append(
                    f"Evidence does not mark the {gate.name} gate as NOT RUN (it did not run)"
                )
            continue
        if not gate.command or gate.command not in evidence:
            problems.append(f"Evidence lacks the {gate.name} gate's command: {gate.command}")
            continue
        if not _exit_code_near(evidence, gate.command, gate.exit_code, commands):
            problems.append(
                f"Evidence lacks the {gate.name} gate's exit code "
                f"({exit_text(gate.exit_code)}) next to its command"
            )
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
        block = evidence[start : min(ends)] if ends else evidence[start:]
        if pattern.search(block):
            return True
    return False


def _marked_not_run(gate: str, evidence: str) -> bool:
    """Does a line of Evidence name the gate and say "not run"?"""
    return any(GATE_WORDS[gate].search(line.group(0)) for line in _NOT_RUN_LINE.finditer(evidence))


def _statuses_in_evidence(evidence: str) -> dict[str, str]:
    """The gates Evidence says did not pass, by name: its ``### <gate> — <status>``
    headings (stepkit's form) and its lines marking a gate NOT RUN."""
    titles = (
        _STATUS_TITLE.fullmatch(h.title) for h in outline(evidence).headings if 2 <= h.level <= 4
    )
    statuses = {m.group(1).lower(): m.group(2).strip().lower() for m in titles if m}
    for name in GATE_WORDS:
        if name not in statuses and _marked_not_run(name, evidence):
            statuses[name] = "not_run"
    return {name: status for name, status in statuses.items() if status != "pass"}
