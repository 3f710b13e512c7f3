"""Built-in ``stepkit_sweep``: the edge-case sweep by the LLM engine.

Annotations of later steps are returned as data; the harness applies them as
additions to those plans' Edge cases sections and nothing else."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages import prompts
from stepkit.results import StageContext


class Annotation(BaseModel):
    """An edge case to add to a LATER step's Edge cases section."""

    step: int = Field(description="The later step's number.")
    edge_case: str = Field(description="One sentence.")


class SweepAnswer(BaseModel):
    """The sweep's structured answer (field names fixed by the protocol)."""

    edge_case_report: str = Field(description='Bullets starting "handled:" or "punted:".')
    downstream_updates: str = Field(description='Before/after proposals for later steps; "None".')
    needs_independent_review: bool = Field(description="5+ files changed or a boundary crossed.")
    annotations: list[Annotation] = Field(default_factory=list,
                                          description="Edge cases for later steps only.")


@hookimpl(trylast=True)
def stepkit_sweep(ctx: StageContext) -> dict[str, Any]:
    """Ask the engine, with the read-only tools, to sweep the changed code."""
    from stepkit.plugins.llm.engine import make_engine
    from stepkit.plugins.llm.tools import read_only_tools

    engine = make_engine(ctx.settings.get("engine"), ctx)
    answer = engine.structured(
        node=ctx.node,
        system=prompts.SWEEP_SYSTEM,
        prefix=prompts.plan_prefix(ctx.state),
        prompt=prompts.sweep_prompt(ctx.state),
        schema=SweepAnswer,
        tools=read_only_tools(ctx.project_dir),
        ctx=ctx,
    )
    return answer.model_dump()
