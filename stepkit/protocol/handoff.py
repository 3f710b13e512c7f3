"""Handoff files: render them from a stage's prose and the recorded gates,
check them against the protocol's schema, and append durable facts to NOTES.md.

The model writes prose only.  The Evidence section is built here from the
gate results the harness recorded and closed by a comment holding its digest,
so a handoff cannot claim a gate that did not run and an Evidence edited
afterwards is seen; :func:`check_handoff_text` verifies that a handoff (ours
or one written by hand) agrees with those records, and that no sentence of
it says a gate passed when the records say it did not.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from stepkit.planrepo.checks import HANDOFF_RESULTS, check_result
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

RESULTS: tuple[str, ...] = HANDOFF_RESULTS
SWEEP_FAULT = "PIPELINE-FAULT: edge-case sweep did not run"
REVIEW_FAULT = "PIPELINE-FAULT: independent review did not run"
#: The Evidence heading of the critical review findings left open.
OPEN_CRITICAL = "Critical review findings still open (review budget spent):"

#: The comment closing stepkit's Evidence: the digest of what it rendered there.
EVIDENCE_MARKER = "stepkit-evidence"

_HEADING = re.compile(r"^##[ \t]+(.+?)[ \t]*#*[ \t]*$")
#: the only lines that can open or close a fence or a section
_SPECIAL_LINE = re.compile(r"^(?: {0,3}(?:`{3,}|~{3,})|##)[^\n]*", re.MULTILINE)
_MARKER = re.compile(rf"<!-- {EVIDENCE_MARKER} sha256:([0-9a-f]{{64}}) -->")
#: each gate's words, searched in lower-cased text (a literal start is fast)
_GATE_MENTIONS = {name: re.compile(core) for name, core in (
    ("format", r"format(?:ter|ting|ted)?\b"), ("lint", r"lint(?:er|ing)?\b"), ("build", r"build\b"),
    ("tests", r"tests?\b"),
)}
_GATE_WORDS = {name: re.compile(rf"\b{p.pattern}", re.IGNORECASE) for name, p in _GATE_MENTIONS.items()}
_NOT_RUN_LINE = re.compile(r"^.*not run.*$", re.IGNORECASE | re.MULTILINE)
_STATUS_HEADING = re.compile(r"^#{2,4}[ \t]+(format|lint|build|tests)[ \t]+[—–-]+[ \t]+(.+?)[ \t]*$",
                             re.IGNORECASE | re.MULTILINE)
#: words and phrases that say a gate passed (searched in lower-cased text)
_CLAIM = re.compile(
    r"pass(?:es|ed|ing)?\b|succe(?:ss|ssful|ssfully|eds?|eded)\b|green\b|ok(?:ay)?\b|clean\b"
    r"|all\s+\d[\d,]*\s+(?:tests?|checks?)\b|(?:no|zero|0)\s+(?:failures?|failed|failing|errors?)\b")
#: what makes a pass word no claim when it comes shortly before it in the clause
_NOT_A_CLAIM = frozenset({
    "not", "never", "no", "none", "nothing", "nor", "neither", "without", "cannot",
    "should", "would", "will", "must", "to", "make", "makes", "ensure", "until", "once", "if",
    "unless", "when", "expect", "expected", "need", "needs", "want", "can", "could", "might",
    "may", "keep",
})
_FAILURE = re.compile(r"\b(?:fail(?:s|ed|ing|ures?)?|errors?|broken|red)\b", re.IGNORECASE)
_COUNT_BEFORE = re.compile(r"(\ball\s+)?\b\d[\d,]*\s+(?:(?:unit\s+)?(?:tests?|checks?)\s+)?$",
                           re.IGNORECASE)
_CLAUSE_SEP = re.compile(r"[,;]|\s(?:but|while|whereas|although|though|so|yet)\s|\s[—–-]\s",
                         re.IGNORECASE)
_SENTENCE_END = re.compile(r"\n|[.!?](?=[ \t])")
_STOPS = (". ", "! ", "? ")
#: characters of a sentence looked at on each side of a pass word
_SENTENCE_MAX = 1000
_BULLET_MARK = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


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
    open_critical: Sequence[str] = (),
    criteria: str = "",
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
    :return: the file's text, secrets masked (the prose comes from any
        handoff plugin).  Evidence is built here from ``gates``, never from
        prose, and ends with the :data:`EVIDENCE_MARKER` comment (the digest
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
            body = _evidence(gates, fault_lines, fix_history, changed_files, fix_attempts, max_fix_attempts,
                             open_critical)
            body = redact(f"{body}\n\n{criteria}" if criteria else body)
            body = f"{body}\n\n{_evidence_marker(body)}"
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
    open_critical: Sequence[str] = (),
) -> str:
    blocks = ["Recorded by stepkit from the gate runs; not written by the model."]
    blocks.extend(fault_lines)
    if open_critical:
        blocks.append(OPEN_CRITICAL + "".join(f"\n- {' '.join(str(f).split())}" for f in open_critical))
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
    scan = _scan(body)
    problems += [f"section '## {name}' appears more than once" for name in scan.duplicates]
    for name in HANDOFF_SECTIONS:
        content = scan.content(name)
        if content is None:
            problems.append(f"missing section '## {name}'")
        elif not content.strip():
            problems.append(f"section '## {name}' is empty (write None when there is nothing)")
    evidence = scan.content("Evidence")
    if evidence is None:
        return problems
    records = [_as_gate(g) for g in gates]
    rendered = _rendered_by_stepkit(evidence)
    if rendered is False:
        problems.append("the Evidence section is not the one stepkit rendered: it was changed after rendering")
    elif rendered is None and records:
        problems.append("the Evidence section was not rendered by stepkit "
                        f"(its {EVIDENCE_MARKER} marker is missing)")
    if records:
        problems += _check_gates_against_evidence(records, evidence)
        not_passed = {g.name: g.status for g in records if g.status != "pass"}
        # a gate passed on the baseline rule still had failing tests: never "passed" in prose
        not_passed.update({g.name: "its failures are PRE-EXISTING or FLAKY, not passing" for g in records
                           if g.status == "pass" and (g.preexisting_failures or g.flaky)})
        failed = [g.name for g in records if g.failed]
    else:
        if evidence.strip().lower() in ("", "none", "none."):
            problems.append("Evidence records no gate: list each command with its exit code, "
                            "or NOT RUN")
        not_passed = _statuses_in_evidence(evidence)
        failed = [name for name, status in not_passed.items() if status not in ("not_run", "not run")]
        if rendered:  # in a run, the check_handoff node checks the map against the records
            from stepkit.protocol.criteria import rendered_criteria_problems

            problems += rendered_criteria_problems(evidence)
    if result == "complete":
        problems += _complete_contradicted(failed, evidence if rendered else "")
    if not_passed:
        skipped = ["evidence"] if rendered else []
        problems += _false_pass_claims(not_passed, scan.prose(body, skipped))
    return problems


def split_sections(body: str) -> tuple[dict[str, str], list[str]]:
    """Split markdown into its ``## `` sections (headings inside code fences
    ignored).  Returns ``{lowercased name: content}`` and the names seen twice."""
    scan = _scan(body)
    return {name: body[start:end] for name, (start, end) in scan.sections.items()}, scan.duplicates


class _Scan:
    """Where a body's ``## `` sections and code fences are (character offsets)."""

    def __init__(self) -> None:
        self.body = ""
        #: lowercased name -> (content start, content end); the last one of a name wins
        self.sections: dict[str, tuple[int, int]] = {}
        #: (heading start, content end) of every section, in order
        self.spans: dict[str, tuple[int, int]] = {}
        self.duplicates: list[str] = []
        #: (start, end) of every fenced code block, fences included
        self.fenced: list[tuple[int, int]] = []

    def content(self, name: str) -> str | None:
        span = self.sections.get(name.lower())
        return None if span is None else self.body[span[0]:span[1]]

    def prose(self, body: str, skipped: Sequence[str] = ()) -> str:
        """The body without its code blocks and the sections named in ``skipped``."""
        cuts = sorted([*self.fenced, *(self.spans[name] for name in skipped if name in self.spans)])
        pieces, at = [], 0
        for start, end in cuts:
            if start > at:
                pieces.append(body[at:start])
            at = max(at, end)
        pieces.append(body[at:])
        return "\n".join(pieces)


def _scan(body: str) -> _Scan:
    """One pass over the lines that can open a fence or a section; the text
    between them is never looked at line by line (a 10 MB handoff stays fast)."""
    scan = _Scan()
    scan.body = body
    current: tuple[str, int, int] | None = None  # name, heading start, content start
    fence: str | None = None
    fence_start = 0
    for match in _SPECIAL_LINE.finditer(body):
        line = match.group(0)
        was_in_fence = fence is not None
        fence = track_fence(line, fence)
        if not was_in_fence and fence is not None:
            fence_start = match.start()
        elif was_in_fence and fence is None:
            scan.fenced.append((fence_start, match.end()))
        heading = None if was_in_fence else _HEADING.match(line)
        if heading is None:
            continue
        if current is not None:
            scan.sections[current[0]] = (current[2], match.start() - 1)
            scan.spans[current[0]] = (current[1], match.start())
        name = heading.group(1).strip()
        if name.lower() in scan.sections:
            scan.duplicates.append(name)
        current = (name.lower(), match.start(), min(match.end() + 1, len(body)))
    if fence is not None:
        scan.fenced.append((fence_start, len(body)))
    if current is not None:
        scan.sections[current[0]] = (current[2], len(body))
        scan.spans[current[0]] = (current[1], len(body))
    return scan


def _check_frontmatter(text: str) -> tuple[list[str], str, str | None]:
    """Return the frontmatter problems, the body after the frontmatter and
    the valid ``result`` (None when it is missing or invalid)."""
    if not text.lstrip("\ufeff").lstrip().startswith("---"):
        return ["frontmatter missing: the file must start with a '---' block (step, title, result)"], text, None
    try:
        data, body = parse_document(text)
    except DocumentError as exc:
        return [str(exc)], text, None
    result = data.get("result")
    if result is None:
        return ["frontmatter has no 'result' (expected complete, partial or blocked)"], body, None
    if check_result(result)[1]:
        return [f"frontmatter result is {result!r}; expected complete, partial or blocked"], body, None
    return [], body, result


def _complete_contradicted(failed: Sequence[str], evidence: str) -> list[str]:
    """``result: complete`` said of a step whose gate failed, or whose
    stepkit-rendered Evidence lists critical review findings still open."""
    problems = [f"result is complete but the {name} gate failed: use partial" for name in failed]
    if OPEN_CRITICAL in evidence:
        problems.append("result is complete but critical review findings are still open: use partial")
    return problems


def _rendered_by_stepkit(evidence: str) -> bool | None:
    """True: the Evidence is byte for byte what stepkit rendered; False: it
    carries stepkit's marker but was changed; None: it carries no marker."""
    content = evidence.rstrip()
    cut = content.rfind("\n") + 1
    marker = _MARKER.fullmatch(content[cut:].strip())
    if marker is None:
        return None
    return marker.group(1) == _digest(content[:cut])


def _evidence_marker(evidence: str) -> str:
    return f"<!-- {EVIDENCE_MARKER} sha256:{_digest(evidence)} -->"


def _digest(evidence: str) -> str:
    return hashlib.sha256(evidence.strip().encode("utf-8", "surrogateescape")).hexdigest()


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
    return any(_GATE_WORDS[gate].search(line.group(0)) for line in _NOT_RUN_LINE.finditer(evidence))


def _statuses_in_evidence(evidence: str) -> dict[str, str]:
    """The gates Evidence says did not pass, by name: its ``### <gate> — <status>``
    headings (stepkit's form) and its lines marking a gate NOT RUN."""
    statuses = {m.group(1).lower(): m.group(2).strip().lower() for m in _STATUS_HEADING.finditer(evidence)}
    for name in _GATE_WORDS:
        if name not in statuses and _marked_not_run(name, evidence):
            statuses[name] = "not_run"
    return {name: status for name, status in statuses.items() if status != "pass"}


def _false_pass_claims(not_passed: Mapping[str, str], prose: str) -> list[str]:
    """Every sentence of ``prose`` that says a gate in ``not_passed`` passed.

    A pass word (passed, green, OK, succeeded, "all N tests", "no failures"
    …) is a claim about the gates its clause names, else the gates its
    sentence names; it is no claim when a negation or a wish (not, never,
    must, should, to …) comes shortly before it in its clause, when it counts
    ("3 passed"), or when its clause also says something failed.  Sentences
    end at a line break or at ``. `` / ``! `` / ``? ``.  Only the sentences
    that name such a gate are read (found by one search per gate), so a long
    handoff costs little beyond those searches."""
    lower = _lower(prose)
    sentences: dict[int, int] = {}
    for gate in not_passed:
        end = -1
        for match in _GATE_MENTIONS[gate].finditer(lower):
            if match.start() >= end and _word_start(lower, match.start()):  # not in the last one
                start, end = _sentence_at(prose, match.start())
                sentences[start] = max(end, sentences.get(start, end))
    problems: list[str] = []
    seen: set[tuple[str, int]] = set()
    for start in sorted(sentences):
        sentence = prose[start:sentences[start]]
        named = [g for g in not_passed if _GATE_WORDS[g].search(sentence)]
        for hit in _CLAIM.finditer(lower, start, sentences[start]):
            if not _word_start(lower, hit.start()):
                continue
            clause, offset = _clause_at(sentence, hit.start() - start)
            if not _is_claim(clause, offset, hit.group(0)):
                continue
            in_clause = [g for g, words in _GATE_WORDS.items() if words.search(clause)]
            about = [g for g in in_clause if g in not_passed] if in_clause else named
            shown = _BULLET_MARK.sub("", sentence.strip())[:200]
            for gate in about:
                if (gate, start) in seen:
                    continue
                seen.add((gate, start))
                status = not_passed[gate]
                did = "did not run" if status in ("not_run", "not run") else f"did not pass ({status})"
                problems.append(f"the {gate} gate {did} but the handoff says it passed: {shown}")
    return problems


def _lower(text: str) -> str:
    """``text`` lower-cased, position for position (the few characters whose
    lower case is longer stay as they are)."""
    lower = text.lower()
    if len(lower) == len(text):
        return lower
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)


def _word_start(text: str, at: int) -> bool:
    return at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")


def _sentence_at(text: str, at: int) -> tuple[int, int]:
    """(start, end) of the sentence around position ``at``, looked for
    within :data:`_SENTENCE_MAX` characters on each side."""
    low, high = max(0, at - _SENTENCE_MAX), min(len(text), at + _SENTENCE_MAX)
    newline = text.rfind("\n", low, at)
    start = newline + 1 if newline != -1 else low
    for mark in _STOPS:
        stop = text.rfind(mark, start, at)
        if stop != -1:
            start = stop + len(mark)
    end = _SENTENCE_END.search(text, at, high)
    return start, end.end() if end else high


def _clause_at(sentence: str, at: int) -> tuple[str, int]:
    """The clause of ``sentence`` holding position ``at``, and ``at`` within it."""
    start, end = 0, len(sentence)
    for sep in _CLAUSE_SEP.finditer(sentence):
        if sep.end() <= at:
            start = sep.end()
        elif sep.start() >= at:
            end = sep.start()
            break
    return sentence[start:end], at - start


def _is_claim(clause: str, offset: int, word: str) -> bool:
    before = clause[:offset]
    if _FAILURE.search(before) or _FAILURE.search(clause, offset + len(word)):
        return False
    words = [w.strip(".,;:!?()\"'`*").lower() for w in before.split()[-5:]]
    if any(w in _NOT_A_CLAIM or w.endswith("n't") for w in words):
        return False
    counted = _COUNT_BEFORE.search(before)
    return not (counted and not counted.group(1) and not word.lower().startswith("all"))


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
