"""Built-in ``stepkit_write_handoff``: the handoff's prose by the LLM engine.

The model gets no tools and writes no Evidence: the harness renders the file
(:func:`stepkit.protocol.handoff.render.render_handoff`) with Evidence from the recorded gates."""

from __future__ import annotations

from collections.abc import Sequence

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages.answers import step_criteria
from stepkit.plugins.stages.documents import (
    DIFF_SUMMARY_CHARS,
    NOTES_CHARS,
    REPORT_CHARS,
    SHARED_RULES,
    SHORT_CHARS,
    diff_summary,
    doc,
    gate_decisions,
    gate_table,
    text,
)
from stepkit.protocol.state import StepState, step_state
from stepkit.records import HandoffProse, StageContext, flag_lines

HANDOFF_SYSTEM = f"""\
You write the prose of the handoff for the step stepkit just executed.  The
harness renders the file: the frontmatter, the eight sections, and the
Evidence section, which it builds from the recorded gate runs.  Never write
evidence yourself: no gate output, commands or exit codes offered as proof.

Rules:
- Honesty first.  A gate marked NOT RUN did not run: never say or imply
  that it passed or that anything is covered by it.  A PIPELINE-FAULT (the
  edge-case sweep or the independent review did not run) is stated as such,
  never presented as findings or as a clean result.
- A gate that lists PRE-EXISTING failures (they failed before the step
  too) or FLAKY tests (failed, then passed when the suite was re-run) is not a clean
  pass: name those tests as such; never say the suite or they passed.
- result: "complete" only when the step's Tasks are done, every gate
  that ran passed and no critical review finding is open (the checker
  refuses it otherwise); "partial" when work remains, a gate failed or a
  critical finding is open; "blocked" when the step could not proceed.
- Judge Completed / Not completed from the diff summary, the coder rounds
  (every round's task and report) and the implementation brief against the plan's Tasks, never from file
  names or green gates alone.
- summary: what the step did, 2-4 sentences.
- completed / not_completed: bullets against the plan's Tasks and
  Acceptance criteria.
- deviations: each staleness-report item and what was done about it; the
  deviation-gate decision and any user guidance; the fix-loop history
  (attempt, what failed, what fixed it); fixes asked by the review.
- downstream_plan_updates: the sweep's proposals for later steps and the
  Edge cases annotations the harness applied.
- edge_cases_discovered: from the sweep report, handled vs punted.
- notes_for_next_step: directives the next step must act on.
- notes_facts: durable, step-independent facts about the project for
  NOTES.md (commands, conventions, gotchas), one line each; nothing about
  this step's status and nothing NOTES.md already says; [] when none.
- step_summary: one line for the final approval prompt.
- acceptance_criteria: the plan's Acceptance criteria are numbered for
  you (C1, C2, ...; see "Acceptance criteria"): one entry per criterion,
  named by its id, with the ids of the tests that check it, as the tests
  gate recorded them (see "Tests stepkit saw pass").  A criterion no
  automated test covers is left out or given tests []; it is shown as "no
  test cited".  Never cite a test that is not listed as passed.
- When "Problems to fix" is present, your previous handoff failed the
  checker: fix exactly those problems and keep everything else.

{SHARED_RULES}"""


def handoff_prompt(state: StepState, faults: Sequence[str]) -> str:
    """The volatile part of the write_handoff request.

    :param faults: the PIPELINE-FAULT lines of this run (sweep or review
        that did not run).
    """
    parts = [
        doc(
            "Gates (recorded by the harness; Evidence is written from these)",
            gate_table(state.gates),
            SHORT_CHARS * 2,
        ),
        doc(
            "Implementation brief (what orient asked the coder to do)",
            state.implementation_brief,
            REPORT_CHARS,
        ),
        doc(
            "Coder rounds (each round's task, the coder's report, the files it changed)",
            _coder_rounds(state),
            REPORT_CHARS * 3,
        ),
        doc(
            "Diff summary (files, lines added/removed, excerpts)",
            diff_summary(state.diff),
            DIFF_SUMMARY_CHARS,
        ),
        doc("Pipeline faults", "\n".join(faults), SHORT_CHARS),
        doc("Acceptance criteria (cite them by id)", _numbered_criteria(state), SHORT_CHARS * 2),
        doc(
            "Tests stepkit saw pass in the final tests gate", _passed_tests(state), SHORT_CHARS * 2
        ),
        doc("Staleness report", state.staleness_report, REPORT_CHARS),
        doc("Deviation summary", state.deviation_summary, SHORT_CHARS),
        doc("User guidance at the deviation gate", state.user_guidance, SHORT_CHARS),
        doc("Gate decisions", gate_decisions(state), SHORT_CHARS * 2),
        doc("Fix loop", _fix_loop(state), SHORT_CHARS * 2),
        doc(
            "Changed files",
            "\n".join(f"- {n}" for n in state.changed_files),
            SHORT_CHARS * 2,
        ),
        doc("Edge-case sweep report", state.edge_case_report, REPORT_CHARS),
        doc(
            "Downstream updates proposed by the sweep",
            text(state.downstream_updates),
            REPORT_CHARS,
        ),
        doc("Annotations applied to later plans", _annotations(state), SHORT_CHARS),
        doc("Independent review", state.review_report, REPORT_CHARS),
        doc(
            "Harness flags",
            "\n".join(f"- {line}" for line in flag_lines(state.tamper_flags)),
            SHORT_CHARS,
        ),
        doc("NOTES.md (already recorded; do not repeat)", state.notes, NOTES_CHARS),
    ]
    feedback = state.handoff_feedback
    if feedback:
        parts.append(doc("Problems to fix", "\n".join(f"- {p}" for p in feedback), SHORT_CHARS))
    parts.append(f"Write the handoff prose for step {state.step}.")
    return "\n".join(parts)


def _numbered_criteria(state: StepState) -> str:
    from stepkit.protocol.criteria import numbered_criteria

    return numbered_criteria(step_criteria(state)) or "None (the plan has no Acceptance criteria)"


def _passed_tests(state: StepState) -> str:
    """The ids the final tests gate saw pass, for the criteria map."""
    from stepkit.protocol.criteria import final_tests_gate, statuses_seen

    seen = statuses_seen(final_tests_gate(state.gates))
    return "\n".join(f"- {test_id}" for test_id, status in seen.items() if status == "passed")


def _coder_rounds(state: StepState) -> str:
    """Every coder round as recorded (``coder_round_log``); the last report
    alone when no round was recorded."""
    log = state.coder_round_log
    if not log:
        coder = state.coder_result
        return (coder and coder.text) or "None (no coder report was recorded)"
    blocks = []
    for record in log:
        files = ", ".join(record.changed_files) or "none"
        blocks.append(
            f"### Round {record.round}\nTask: {record.task}\n"
            f"Files changed in this round: {files}\nReport:\n{record.report}"
        )
    return "\n\n".join(blocks)


def _fix_loop(state: StepState) -> str:
    lines = [f"Fix attempts used: {state.fix_attempts} of {state.max_fix_attempts}"]
    lines += [f"- {item}" for item in state.fix_history]
    return "\n".join(lines)


def _annotations(state: StepState) -> str:
    return "\n".join(f"- step {a.step}: {a.edge_case}" for a in state.applied_annotations)


@hookimpl(trylast=True)
def stepkit_write_handoff(ctx: StageContext) -> HandoffProse:
    """Ask the engine for the handoff's prose sections, in the reading
    nodes' shared layout (:mod:`~stepkit.plugins.stages.readers`): their
    tools are sent, every call to them refused."""
    from stepkit.plugins.stages.readers import ask_reader
    from stepkit.protocol.stages import pipeline_faults

    answer = ask_reader(
        ctx,
        "handoff",
        instructions=HANDOFF_SYSTEM,
        prompt=handoff_prompt(step_state(ctx), pipeline_faults(ctx)),
        use_tools=False,
    )
    return HandoffProse.model_validate(answer.model_dump())
