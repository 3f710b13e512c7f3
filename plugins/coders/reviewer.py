"""The independent reviewer (``--reviewer anthropic[:MODEL] | command:SHELL |
claude | codex | aider | opencode``).

Every reviewer gets the same material: the step's Acceptance criteria,
orient's brief and findings, the deviation and gate decisions, NOTES.md, the
changed files, the harness's tamper flags, the gate results, the sweep
report, the step's diff (bounded like the sweep's) and the plan.  The
built-in reviewer, and the claude and codex presets, answer with structured
findings, each with a severity, which stepkit renders as the report.  A text
reviewer's report is read finding by finding (:func:`text_findings`): a
severity is read from a finding line (a severity mark or word at its start)
or from a heading above a list, never from a sentence that mentions one, and
each finding is kept once.  Either way the report has one line per finding
and only a line that STARTS with 🔴 is critical (what route_review sends
back to the coder).

A review that did not run properly is a fault, never findings: a model
fault, a command that crashed, timed out, exited non-zero or printed
nothing, a preset whose tool reported an error, and a reviewer that changed
the project tree (reviews are read-only).  The two attempts of
the review are the graph's business; nothing is retried here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.stages.answers import ReviewAnswer
from stepkit.protocol.state import StepState, step_state
from stepkit.records import (
    Finding,
    ReviewResult,
    Severity,
    StageContext,
    StageFault,
    flag_lines,
    report_of,
)

REVIEW_TURNS = 40

REVIEW_RULES = """You are an independent code reviewer. You did not write this change.
Review the step's diff against the plan's Acceptance criteria, reading the project with
the tools where the diff is not enough. Do not change anything. The gate results and the
edge-case sweep report are the harness's records: use them, but judge the code yourself.

Severities:
- critical: an Acceptance criterion not met, a bug or regression, a security problem,
  or weakened verification (deleted or skipped tests, new ignore markers, loosened lint
  or coverage settings). The step is not done until it is fixed.
- should_fix: a real problem that does not block the step.
- minor: style, naming, a nit.
Name the file (and the criterion) each finding is about."""

REVIEW_SYSTEM = (
    REVIEW_RULES
    + """
Answer with the findings: each with its severity, file, criterion ("none" when no
Acceptance criterion is concerned) and problem (one sentence); an empty list when there
is nothing to report."""
)

#: How a text reviewer (an external CLI) writes the same findings.
TEXT_FORMAT = """Write the review as findings, one per line, each STARTING with its severity tag:
🔴 critical, 🟡 should fix, 🟢 minor. Only a line that starts with 🔴 is critical.
If there is nothing to report, write "No findings." """

# A severity at the start of a line: its mark, its word, or both ("🔴 critical",
# "**Critical**", "[minor]", "Should fix:"); the rest of the line is the finding.
_SEVERITY_WORDS: dict[str, Severity] = {
    "critical": "critical",
    "blocker": "critical",
    "blocking": "critical",
    "should fix": "should_fix",
    "should_fix": "should_fix",
    "major": "should_fix",
    "minor": "minor",
    "nit": "minor",
    "nitpick": "minor",
}
_MARKS: dict[str, Severity] = {"🔴": "critical", "🟡": "should_fix", "🟢": "minor"}
_WORD = "|".join(sorted((re.escape(w) for w in _SEVERITY_WORDS), key=len, reverse=True))
_LEAD = lazy_compile(
    rf"^(?P<mark>[🔴🟡🟢])?\s*[\[(*_]*\s*(?P<word>{_WORD})?(?![\w-])[\])*_]*"
    r"(?:\s+(?:findings?|issues?|severity))?\s*[:\-–—.)]*\s*",
    re.IGNORECASE,
)
_LIST = lazy_compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_HEADING = lazy_compile(r"^\s*(?:#{1,6}\s+|\*\*(?=.*\*\*\s*:?\s*$))")
# what a finding line says when it reports that there is none
_NONE = lazy_compile(
    r"^(?:\(?(?:none|nothing|n/?a|no(?:ne)? (?:findings?|issues?)(?: found)?)\)?"
    r"|no \w+ (?:findings?|issues?)(?: found)?|-)?[.!]?$",
    re.IGNORECASE,
)


def text_findings(report: str) -> list[Finding]:
    """The findings of a text review, each once.

    A line is a finding when, after a list marker, it starts with a severity
    (🔴, "critical", "**Should fix**:" …), or when it is a list item under a
    heading that names one ("### 🔴 Critical" then bullets).  A finding that
    says there is none ("🔴 critical findings: none", "- None.") is no
    finding, and a line that only mentions a severity is prose."""
    found: list[tuple[Severity, str]] = []
    section: Severity | None = None
    for raw in report.splitlines():
        line = raw.strip()
        if not line:
            continue
        listed = _LIST.match(line)
        heading = _HEADING.match(line)
        body = (
            line.lstrip("#").strip().strip("*").strip()
            if heading
            else line[listed.end() :]
            if listed
            else line
        )
        severity, rest = _severity(body)
        if heading or (severity is not None and not listed and not rest.rstrip(":")):
            section = severity  # a heading (or a "Critical findings:" line) above a list
        elif severity is None and listed:
            severity, rest = section, body
        if severity is None or not rest.rstrip(":") or _NONE.match(rest):
            continue
        if (severity, rest) not in found:
            found.append((severity, rest))
    return [Finding(severity=severity, text=text) for severity, text in found]


def _severity(text: str) -> tuple[Severity | None, str]:
    """The severity ``text`` starts with (None: it starts with none) and the rest."""
    match = _LEAD.match(text)
    if match is None or not (match.group("mark") or match.group("word")):
        return None, text
    if match.group("mark"):
        severity = _MARKS[match.group("mark")]
    else:
        severity = _SEVERITY_WORDS[" ".join(match.group("word").lower().replace("_", " ").split())]
    return severity, text[match.end() :].strip()


def build_review_prompt(
    state: StepState, with_instructions: bool = True, with_plan: bool = True
) -> str:
    """The reviewer's task and material, from the run state: the plan's
    Acceptance criteria, orient's implementation brief and findings, the
    deviation and gate decisions with the user's guidance, NOTES.md, the
    changed files, the harness's tamper flags, the gate results, the sweep
    report, the diff and the plan, each in a ``<document>``;
    ``with_instructions`` adds the rules and the text format (for external
    CLIs, which get no system prompt from stepkit); without ``with_plan``
    the plan is left to the request's cached prefix.  Every document is
    bounded by the limits of :mod:`stepkit.plugins.stages.documents`."""
    from stepkit.planrepo.sections import plan_section
    from stepkit.plugins.stages.documents import (
        DIFF_CHARS,
        NOTES_CHARS,
        PLAN_CHARS,
        REPORT_CHARS,
        SHORT_CHARS,
        bullets,
        doc,
        gate_decisions,
        gate_table,
    )

    plan = state.plan_text
    criteria = (
        plan_section(plan, "Acceptance criteria") or "(the plan has no Acceptance criteria section)"
    )
    title, step = state.title, "?" if state.step is None else state.step
    return "\n".join(
        [
            f"# Review step {step}" + (f": {title}" if title else "") + "\n",
            *([REVIEW_RULES + "\n", TEXT_FORMAT] if with_instructions else []),
            doc("Acceptance criteria", criteria, SHORT_CHARS * 2),
            doc(
                "Implementation brief (what orient asked the coder to do)",
                state.implementation_brief,
                REPORT_CHARS,
            ),
            doc(
                "Orient's findings (the plan checked against the code)",
                state.staleness_report,
                REPORT_CHARS,
            ),
            doc("Deviation summary", state.deviation_summary, SHORT_CHARS),
            doc(
                "Gate decisions (an approved deviation is not an unmet criterion)",
                gate_decisions(state),
                SHORT_CHARS * 2,
            ),
            doc("User guidance at the deviation gate", state.user_guidance, SHORT_CHARS),
            doc("NOTES.md (the project's recorded facts)", state.notes, NOTES_CHARS),
            doc("Changed files", bullets(state.changed_files), SHORT_CHARS * 2),
            doc(
                "Tamper flags raised by the harness (judge each)",
                bullets(flag_lines(state.tamper_flags)),
                SHORT_CHARS * 2,
            ),
            doc(
                "Gate results (recorded by the harness)",
                gate_table(state.gates),
                SHORT_CHARS * 2,
            ),
            doc(
                "Edge-case sweep report",
                state.edge_case_report or "None (the sweep did not run or found nothing)",
                REPORT_CHARS,
            ),
            doc("Diff", state.diff or "(empty diff)", DIFF_CHARS, shrink_fences=False),
            *([doc("Plan", plan, PLAN_CHARS, shrink_fences=False)] if with_plan else []),
        ]
    )


@hookimpl
def stepkit_check_delegate(role: str, spec: str | None, presets: Mapping[str, Any]) -> str | None:
    """The reviewers :func:`stepkit_review` answers for."""
    from stepkit.plugins.coders.command import check_builtin_spec

    return check_builtin_spec(spec, presets) if role == "reviewer" else None


@hookimpl(trylast=True)
def stepkit_review(ctx: StageContext) -> ReviewResult | None:
    """Answer for ``anthropic[:MODEL]``, ``command:SHELL`` and the registered presets."""
    from stepkit.plugins.coders.command import builtin_spec, delegate_spec
    from stepkit.presets import presets

    table = presets(ctx.pm)
    kind, arg = builtin_spec(delegate_spec(ctx.settings, "reviewer"), table) or ("", "")
    if kind == "anthropic":
        return _llm_review(ctx, f"anthropic:{arg}" if arg else None)
    if kind == "command":
        if not arg.strip():
            return ReviewResult(fault="--reviewer command: names no command")
        return _command_review(ctx, arg.strip(), None)
    if kind != "preset":
        return None
    preset = table[arg]
    with preset.session(ctx, review=True, answer_schema=ReviewAnswer) as call:
        return _command_review(ctx, preset.command(call), preset, call)


def _llm_review(ctx: StageContext, engine_spec: str | None) -> ReviewResult:
    from stepkit.plugins.stages.readers import ask_reader

    material = build_review_prompt(step_state(ctx), with_instructions=False, with_plan=False)
    try:  # the reading nodes' shared layout: the plan is the cached prefix
        answer = ask_reader(
            ctx,
            "review",
            instructions=REVIEW_SYSTEM,
            prompt=f"{material}\n\nReview the change now and answer with the findings.",
            engine_spec=engine_spec,
            max_turns=REVIEW_TURNS,
        )
    except StageFault as fault:
        return ReviewResult(fault=fault.note)
    review = answer.result()
    if not review.review_report:
        return ReviewResult(fault="the reviewer returned an empty report")
    return review


def _command_review(ctx: StageContext, command: str, preset, call=None) -> ReviewResult:
    from stepkit.plugins.coders.command import record_usage, run_delegate
    from stepkit.plugins.coders.results import reported_usage

    name = f"reviewer-{preset.name}" if preset else "reviewer"
    try:
        run = run_delegate(
            ctx,
            command,
            build_review_prompt(step_state(ctx)),
            name=name,
            timeout=ctx.config.timeouts.reviewer,
            env=preset.env(call) if preset else None,
            spends=preset is not None,
        )
    except StageFault as fault:  # the budget is spent
        return ReviewResult(fault=fault.note)
    parsed = preset.read(run.output, call.scratch) if preset is not None else None
    record_usage(ctx, name, parsed.usage if parsed is not None else reported_usage(run))
    if (
        parsed is not None and parsed.limit
    ):  # whatever its exit code: the subscription, not the review
        from stepkit.plugins.coders.presets.base import limit_note

        return ReviewResult(fault=limit_note(preset.name, parsed.limit))
    crash = run.crash("the reviewer")
    if crash:
        return ReviewResult(fault=f"{crash} (log: {run.log})")
    if run.exit_code != 0:
        return ReviewResult(fault=f"the reviewer exited with code {run.exit_code} (log: {run.log})")
    report = run.output
    if preset is not None:
        if parsed is None:
            return ReviewResult(fault=f"could not read {preset.name}'s output (log: {run.log})")
        if parsed.errors or parsed.failed:
            problems = [*parsed.errors, *([parsed.failed] if parsed.failed else [])]
            return ReviewResult(fault=f"{preset.name} reported: {'; '.join(problems)[:500]}")
        report = (
            parsed.last_reply or parsed.text
        )  # a tool asked again answers again: its last answer
    if not report.strip() and not (parsed is not None and parsed.structured):
        return ReviewResult(fault=f"the reviewer printed no report (log: {run.log})")
    return _review(report, parsed.structured if parsed is not None else None)


def _review(text: str, structured: dict[str, Any] | None) -> ReviewResult:
    """A CLI reviewer's review: its structured findings when it gave them
    (``structured``, or its last message as the JSON object), else the
    findings of its text, read by their severity words here, where the text
    comes in."""
    from stepkit.plugins.llm.helpers import parse_answer

    answer, _problem = parse_answer(json.dumps(structured) if structured else text, ReviewAnswer)
    if answer is not None:
        return answer.result()
    findings = text_findings(text)
    return ReviewResult(review_report=report_of(findings), findings=findings)
