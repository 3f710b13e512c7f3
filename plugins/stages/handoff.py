"""Built-in ``stepkit_write_handoff``: the handoff's prose by the LLM engine.

The model gets no tools and writes no Evidence: the harness renders the file
(:func:`stepkit.handoff.render_handoff`) with Evidence from the recorded gates."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages import prompts
from stepkit.results import StageContext


class HandoffAnswer(BaseModel):
    """The handoff writer's structured answer (field names fixed)."""

    step_summary: str = Field(description="One line for the final approval prompt.")
    result: Literal["complete", "partial", "blocked"]
    summary: str
    completed: str
    not_completed: str
    deviations: str
    downstream_plan_updates: str
    edge_cases_discovered: str
    notes_for_next_step: str
    notes_facts: list[str] = Field(default_factory=list,
                                   description="Durable step-independent facts for NOTES.md.")


@hookimpl(trylast=True)
def stepkit_write_handoff(ctx: StageContext) -> dict[str, Any]:
    """Ask the engine (no tools) for the handoff's prose sections."""
    from stepkit.plugins.llm.engine import make_engine
    from stepkit.stages import pipeline_faults

    engine = make_engine(ctx.settings.get("engine"), ctx)
    answer = engine.structured(
        node=ctx.node,
        system=prompts.HANDOFF_SYSTEM,
        prefix=prompts.plan_prefix(ctx.state),
        prompt=prompts.handoff_prompt(ctx.state, pipeline_faults(ctx.state)),
        schema=HandoffAnswer,
        tools=None,
        ctx=ctx,
    )
    return answer.model_dump()
