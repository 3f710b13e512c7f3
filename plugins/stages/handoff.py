"""Built-in ``stepkit_write_handoff``: the handoff's prose by the LLM engine.

The model gets no tools and writes no Evidence: the harness renders the file
(:func:`stepkit.protocol.handoff.render_handoff`) with Evidence from the recorded gates."""

from __future__ import annotations

from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages import prompts
from stepkit.records import HandoffProse, StageContext


@hookimpl(trylast=True)
def stepkit_write_handoff(ctx: StageContext) -> dict[str, Any]:
    """Ask the engine (no tools) for the handoff's prose sections."""
    from stepkit.plugins.llm.engine import ask
    from stepkit.protocol.stages import pipeline_faults

    return ask(ctx, system=prompts.HANDOFF_SYSTEM, prefix=prompts.plan_prefix(ctx.state),
               prompt=prompts.handoff_prompt(ctx.state, pipeline_faults(ctx)),
               schema=HandoffProse, tools=None)
