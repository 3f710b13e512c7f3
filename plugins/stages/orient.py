"""Built-in ``stepkit_orient``: read-only orientation and staleness check by
the LLM engine.  trylast, so a project's own implementation answers first."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages.documents import (
    HANDOFF_CHARS,
    NOTES_CHARS,
    SHARED_RULES,
    doc,
    plan_prefix,
)
from stepkit.records import OrientResult, StageContext

#: The stages whose built-in implementation asks the run's engine.
LLM_STAGES = ("orient", "sweep", "handoff")


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
3. Classify each discrepancy:
   - minor: a moved file, a renamed helper, a small signature difference.
     Fold the correction into the implementation brief.
   - major: it changes the step's scope, approach or interfaces, or it
     affects later steps.

Answer fields:
- plan_summary: what the step delivers, 2-5 sentences.
- implementation_brief: what the coder must do, with the minor corrections
  folded in: files to change, patterns to match from Context, tests to write
  from the Acceptance criteria, what is Out of scope.
- staleness_report: one bullet per discrepancy, tagged [minor] or [major],
  with the evidence (path:line).  Exactly "clean" when there is none.
- has_major_deviation: true only when the report has a [major] item.
- deviation_summary: for a major deviation, what differs, why it matters
  and the options; "None" otherwise.

{SHARED_RULES}"""


def orient_prompt(state: Mapping[str, Any]) -> str:
    """The volatile part of the orient request."""
    return "\n".join([
        doc("Previous handoff", state.get("previous_handoff") or "None (this is the first step)",
             HANDOFF_CHARS),
        doc("NOTES.md", state.get("notes"), NOTES_CHARS),
        f"Orient for step {state.get('step')}: check the plan against the code and answer.",
    ])


@hookimpl
def stepkit_configure(config: Any, settings: dict[str, Any]) -> None:
    """Check the engine spec that every built-in LLM stage uses before the run
    starts: an unknown engine or a missing scripted file is a usage error, and
    so is an engine that cannot be called (no credentials) when one of those
    stages is among the command's ``settings["stages"]``."""
    from stepkit.plugins.llm.engine import check_engine_spec

    if settings.get("project_dir"):
        calls = any(stage in LLM_STAGES for stage in settings.get("stages", ()))
        check_engine_spec(settings.get("engine"), Path(settings["project_dir"]), calls=calls)


@hookimpl(trylast=True)
def stepkit_orient(ctx: StageContext) -> dict[str, Any]:
    """Ask the engine, with the read-only tools, to orient for the step."""
    from stepkit.plugins.llm.engine import ask
    from stepkit.plugins.llm.tools import read_only_tools

    return ask(ctx, system=ORIENT_SYSTEM, prefix=plan_prefix(ctx.state),
               prompt=orient_prompt(ctx.state), schema=OrientResult,
               tools=read_only_tools(ctx.project_dir))
