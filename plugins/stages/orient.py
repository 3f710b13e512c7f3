"""Built-in ``stepkit_orient``: read-only orientation and staleness check by
the LLM engine.  trylast, so a project's own implementation answers first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages import prompts
from stepkit.records import OrientResult, StageContext

#: The stages whose built-in implementation asks the run's engine.
LLM_STAGES = ("orient", "sweep", "handoff")


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

    return ask(ctx, system=prompts.ORIENT_SYSTEM, prefix=prompts.plan_prefix(ctx.state),
               prompt=prompts.orient_prompt(ctx.state), schema=OrientResult,
               tools=read_only_tools(ctx.project_dir))
