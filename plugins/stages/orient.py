"""Built-in ``stepkit_orient``: read-only orientation and staleness check by
the LLM engine.  trylast, so a project's own implementation answers first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages.answers import OrientAnswer
from stepkit.plugins.stages.documents import (
    HANDOFF_CHARS,
    LATER_STEPS_CHARS,
    NOTES_CHARS,
    ORIENT_LATER_SECTIONS,
    SHARED_RULES,
    doc,
    later_steps,
)
from stepkit.protocol.state import StepState, step_state
from stepkit.records import (
    OrientResult,
    StageContext,
)

ORIENT_SYSTEM = f"""\
You are the orient stage of stepkit.  stepkit executes ONE step of a phased
implementation plan; a coder will implement the step after you, guided by
your brief.

You are read-only.  Use the tools to inspect the project; never change a
file (a change to the tree during this stage fails the run).  run_command is
for read-only inspection only.

Do this:
1. Merge the previous handoff's directives (Not completed, Downstream plan
   updates, Notes for next step) and NOTES.md with the step plan.
2. Check the plan's assumptions against the current code:
   - every file, module, function, class or symbol the plan references
     exists with the shape the plan expects;
   - every snippet in the plan's Context section still matches the code;
   - every command in Test commands exists in this project (check the
     manifests and scripts; do not run the full test suite).
3. Record each discrepancy as a finding:
   - minor: a moved file, a renamed helper, a small signature difference.
     Fold the correction into the implementation brief.
   - major: it changes the step's scope, approach or interfaces, or it
     affects later steps (their Objectives and stated assumptions are
     listed under "Later steps").

Answer fields:
- plan_summary: what the step delivers, 2-5 sentences.
- implementation_brief: what the coder must do, with the minor corrections
  folded in: files to change, patterns to match from Context, tests to write
  from the Acceptance criteria, what is Out of scope.
- findings: one per discrepancy: severity (minor or major), plan_says,
  code_has, evidence (path:line), correction; [] when the plan matches the
  code.  stepkit derives the staleness report and the deviation verdict
  from them.
- deviation_summary: for a major finding, what differs, why it matters
  and the options; "None" otherwise.

{SHARED_RULES}"""


def orient_result(answer: OrientAnswer) -> OrientResult:
    """The orient stage's output fields, derived by stepkit from the
    findings: ``has_major_deviation`` is whether one is major, and the
    staleness report lists them all ("clean" when there is none)."""
    from stepkit.text import one_line

    if answer._given is not None:
        return OrientResult.model_validate(answer._given)
    report = "\n".join(
        f"- [{f.severity}] plan says: {one_line(f.plan_says)}; code has: {one_line(f.code_has)} "
        f"({one_line(f.evidence)}); correction: {one_line(f.correction)}"
        for f in answer.findings
    )
    major = any(f.finding().severity == "critical" for f in answer.findings)
    return OrientResult(
        plan_summary=answer.plan_summary,
        implementation_brief=answer.implementation_brief,
        staleness_report=report or "clean",
        has_major_deviation=major,
        deviation_summary=answer.deviation_summary if major else "None",
    )


def orient_prompt(state: StepState) -> str:
    """The volatile part of the orient request."""
    later = later_steps(state, ORIENT_LATER_SECTIONS) or "None (this is the last step)"
    return "\n".join(
        [
            doc(
                "Previous handoff",
                state.previous_handoff or "None (this is the first step)",
                HANDOFF_CHARS,
            ),
            doc("NOTES.md", state.notes, NOTES_CHARS),
            doc("Later steps (Objectives and stated assumptions)", later, LATER_STEPS_CHARS),
            f"Orient for step {state.step}: check the plan against the code and answer.",
        ]
    )


@hookimpl
def stepkit_configure(config: Any, settings: dict[str, Any], pm: Any) -> None:
    """Check the engine spec that every built-in LLM stage uses before the run
    starts: an unknown engine or a missing scripted file is a usage error, and
    so is an engine that cannot be called (no credentials) when one of those
    stages is among the command's ``settings["stages"]``."""
    from stepkit.plugins.llm.engine import check_engine_spec
    from stepkit.protocol.stages import STAGES

    if settings.get("project_dir"):
        asks = [STAGES[name] for name in settings.get("stages", ()) if name in STAGES]
        calls = any(stage.calls_model and not stage.delegate for stage in asks)
        check_engine_spec(settings.get("engine"), Path(settings["project_dir"]), pm=pm, calls=calls)


@hookimpl(trylast=True)
def stepkit_orient(ctx: StageContext) -> OrientResult:
    """Ask the engine, with the read-only tools, to orient for the step."""
    from stepkit.plugins.stages.readers import ask_reader

    answer = ask_reader(
        ctx, "orientation", instructions=ORIENT_SYSTEM, prompt=orient_prompt(step_state(ctx))
    )
    return orient_result(answer)
