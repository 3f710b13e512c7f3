"""One request layout for the nodes that read the project and answer
(orient, the edge-case sweep, the built-in reviewer, the handoff writer),
so that they share one cached prefix.

The API caches a request's prefix in the order tools → system → messages;
the output format (sent as a system prompt of its own), thinking and effort
key everything after the tools.  Two nodes read each other's prefix only
when all of these are the same, so every reading node sends:

1. the read-only tool definitions; a node that may not use them (the
   handoff writer) has every call refused by the harness (``Tool.refused``);
2. one system text, :data:`READER_SYSTEM`;
3. one output format, :func:`reader_answer`: an object with one field per
   role, each that role's own answer schema or null.  The harness accepts
   only the asking role's field, validated by its own schema, with every
   other field null (:func:`role_answer`), and asks again once otherwise;
4. the step plan (:func:`~stepkit.plugins.stages.documents.plan_prefix`),
   marked for caching;
5. then the node's role, its own instructions (what was its system prompt)
   and its material, after the marker.

Nodes with the same effort (and model) read each other's prefix: with the
stage defaults, the review reads orient's and the handoff the sweep's.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from stepkit.protocol.state import StepState, step_state
from stepkit.records import StageContext

#: The roles of the shared output format, in its field order.
ROLES = ("orientation", "sweep", "review", "handoff")

READER_SYSTEM = """\
You are one stage of stepkit, a harness that executes ONE step of a phased
implementation plan: orient, a coder, an edge-case sweep, an independent
review, the handoff.  The step plan comes first; after it, your role, its
instructions and its material.  Follow your role's instructions.

Tools: read_file, list_dir, search and run_command, on the project root,
read-only (run_command for read-only inspection only).  A role that may not
use them has every call refused.

Answer with the JSON object of the output format: fill in only the field
named for your role, with every other field null."""


class _ReaderFields(BaseModel):
    """The shared output format's base: which role a request asks for."""

    model_config = ConfigDict(title="ReaderAnswer")
    role: ClassVar[str] = ""
    #: the asking role's fields added after a release (:func:`role_answer`)
    ADDED_AFTER_RELEASE: ClassVar[dict[str, Any]] = {}

    @model_validator(mode="before")
    @classmethod
    def _a_bare_answer(cls, data: Any) -> Any:
        """A role's answer given on its own (a scripted engine's file) is its field."""
        if cls.role and isinstance(data, dict) and not set(data) & set(ROLES):
            return {cls.role: data}
        return data

    @model_validator(mode="after")
    def _only_the_role(self) -> _ReaderFields:
        if not self.role:
            return self
        if getattr(self, self.role) is None:
            raise ValueError(f"fill in `{self.role}`, your role's answer")
        others = [r for r in ROLES if r != self.role and getattr(self, r) is not None]
        if others:
            raise ValueError(f"fill in `{self.role}` only: {', '.join(others)} must be null")
        return self


def reader_answer(state: StepState) -> type[BaseModel]:
    """The output format every reading node of ``state``'s step sends (its
    per-step parts: the sweep's later steps, the handoff's criteria ids)."""
    from stepkit.plugins.stages.answers import step_criteria

    return _reader_answer(tuple(s.step for s in state.later_steps), tuple(step_criteria(state)))


@functools.lru_cache(maxsize=16)
def _reader_answer(later_steps: tuple[int, ...], criteria: tuple[str, ...]) -> type[BaseModel]:
    """The shared format for those per-step parts, built once per process
    (pydantic builds a model's validator and schema in milliseconds, and
    every reading node of a step asks for the same one)."""
    from stepkit.plugins.stages.answers import (
        OrientAnswer,
        ReviewAnswer,
        handoff_schema,
        sweep_schema,
    )

    schemas: dict[str, Any] = {
        "orientation": OrientAnswer,
        "sweep": sweep_schema(later_steps),
        "review": ReviewAnswer,
        "handoff": handoff_schema(criteria),
    }
    fields: dict[str, Any] = {
        role: (schemas[role] | None, Field(None, description=f"the {role} answer; null otherwise"))
        for role in ROLES
    }
    return create_model("ReaderAnswer", __base__=_ReaderFields, **fields)


@functools.lru_cache(maxsize=64)
def role_answer(fmt: type[BaseModel], role: str) -> type[BaseModel]:
    """``fmt`` (same JSON schema) accepting only ``role``'s field filled in
    (made once per format and role, as :func:`reader_answer` is)."""
    if role not in ROLES:
        raise ValueError(f"no role {role!r} in the shared output format")
    (own,) = [t for t in get_args(fmt.model_fields[role].annotation) if t is not type(None)]
    # a scripted engine's answers file of an earlier format gets the role's safe defaults
    later = getattr(own, "ADDED_AFTER_RELEASE", {})
    return type(
        fmt.__name__,
        (fmt,),
        {"role": role, "ADDED_AFTER_RELEASE": later, "__module__": fmt.__module__},
    )


def ask_reader(
    ctx: StageContext,
    role: str,
    *,
    instructions: str,
    prompt: str,
    use_tools: bool = True,
    engine_spec: str | None = None,
    max_turns: int = 20,
) -> Any:
    """Ask the engine as ``role`` in the shared layout; the role's own answer
    (an instance of its schema), validated by the harness."""
    from stepkit.plugins.llm.engine import make_engine
    from stepkit.plugins.llm.tools import read_only_tools
    from stepkit.plugins.stages.documents import plan_prefix

    state = step_state(ctx)
    tools = read_only_tools(ctx.project_dir)
    if not use_tools:
        reason = f"the {role} has no tools: answer from the material you were given"
        tools = [_refused(tool, reason) for tool in tools]
    answer = make_engine(engine_spec, ctx).structured(
        node=ctx.node,
        system=READER_SYSTEM,
        prefix=plan_prefix(state),
        prompt=f"# Your role: {role}\n\n{instructions}\n\n{prompt}",
        schema=role_answer(reader_answer(state), role),
        tools=tools,
        ctx=ctx,
        max_turns=max_turns,
    )
    return getattr(answer, role)


def _refused(tool: Any, reason: str) -> Any:
    from dataclasses import replace

    return replace(tool, refused=reason)
