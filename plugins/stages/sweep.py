"""Built-in ``stepkit_sweep``: the edge-case sweep by the LLM engine.

Annotations of later steps are returned as data; the harness applies them as
additions to those plans' Edge cases sections and nothing else."""

from __future__ import annotations

from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages import prompts
from stepkit.records import StageContext, SweepResult


@hookimpl(trylast=True)
def stepkit_sweep(ctx: StageContext) -> dict[str, Any]:
    """Ask the engine, with the read-only tools, to sweep the changed code."""
    from stepkit.plugins.llm.engine import ask
    from stepkit.plugins.llm.tools import read_only_tools

    return ask(ctx, system=prompts.SWEEP_SYSTEM, prefix=prompts.plan_prefix(ctx.state),
               prompt=prompts.sweep_prompt(ctx.state), schema=SweepResult,
               tools=read_only_tools(ctx.project_dir))
