"""Built-in ``stepkit_sweep``: the edge-case sweep by the LLM engine.

Annotations of later steps are returned as data; the harness applies them as
additions to those plans' Edge cases sections and nothing else."""

from __future__ import annotations

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages.documents import (
    DIFF_CHARS,
    LATER_STEPS_CHARS,
    REPORT_CHARS,
    SHARED_RULES,
    SHORT_CHARS,
    SWEEP_LATER_SECTIONS,
    bullets,
    doc,
    later_steps,
)
from stepkit.protocol.state import StepState, step_state
from stepkit.records import StageContext, SweepResult, flag_lines

SWEEP_SYSTEM = f"""\
You are the edge-case sweep of stepkit.  The current step's code is written
and its gates ran.  Read the changed code with the read-only tools and list
the edge cases of the new behaviour: empty, missing or huge inputs; invalid
values; errors, timeouts and partial failure; boundaries and off-by-one;
encoding and paths; concurrency; permissions and untrusted input.

For each edge case say whether it is handled (where: path:line or the test
that covers it) or punted (why, and which step should own it).

Rules:
- annotations: only for an edge case that belongs to a LATER step (one of
  those listed under "Later steps"), and only when that step's Edge cases
  section does not already cover it.  One short sentence each, as
  {{step, edge_case}}.  Never annotate the current or an earlier step.  The
  harness appends annotations to the later plan's Edge cases section; no
  other part of any plan can be changed.
- downstream_updates: a change that a later step's Objective, Tasks,
  Acceptance criteria or Out of scope would need is only proposed, never
  applied: for each, "Step N, <section>: before: ... / after: ... / why: ...".
  "None" when there is nothing.
- needs_independent_review: true when 5 or more files changed, or the change
  crosses a boundary: authentication or authorization, a public API, a data
  schema or migration, security-sensitive code (secrets, crypto, permissions,
  parsing untrusted input), or a tamper flag was raised.  Otherwise false.
- edge_case_report: bullets starting "handled:" or "punted:".

{SHARED_RULES}"""


def sweep_prompt(state: StepState) -> str:
    """The volatile part of the sweep request."""
    changed = state.changed_files
    later = later_steps(state, SWEEP_LATER_SECTIONS)
    return "\n".join(
        [
            doc("Implementation brief", state.implementation_brief, REPORT_CHARS),
            doc(
                f"Changed files ({len(changed)})",
                "\n".join(f"- {name}" for name in changed),
                SHORT_CHARS * 2,
            ),
            doc("Diff", state.diff, DIFF_CHARS),
            doc(
                "Tamper flags raised by the harness (signs that verification was weakened)",
                bullets(flag_lines(state.tamper_flags)),
                SHORT_CHARS * 2,
            ),
            doc(
                "Later steps (annotation and proposal targets)",
                later or "None (this is the last step: no annotations)",
                LATER_STEPS_CHARS,
            ),
            f"Sweep step {state.step}'s changes for edge cases and answer.",
        ]
    )


@hookimpl(trylast=True)
def stepkit_sweep(ctx: StageContext) -> SweepResult:
    """Ask the engine, with the read-only tools, to sweep the changed code
    (the reading nodes' shared layout: :mod:`~stepkit.plugins.stages.readers`)."""
    from stepkit.plugins.stages.readers import ask_reader

    answer = ask_reader(
        ctx, "sweep", instructions=SWEEP_SYSTEM, prompt=sweep_prompt(step_state(ctx))
    )
    return SweepResult.model_validate({"annotations": [], **answer.model_dump()})
