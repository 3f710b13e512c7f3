"""What every LLM engine shares (:mod:`~stepkit.plugins.llm.anthropic_engine`,
:mod:`~stepkit.plugins.llm.openai_engine` and the CLI engines of
:mod:`~stepkit.plugins.llm.cli_engine`): a setting read from ``--set``, the
model a node runs on, the answer validated against the stage's schema (and
the correction sent back when it is not), a call's usage recorded, and the
one-line fault note.  The run budget is :mod:`~stepkit.plugins.llm.budget`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from stepkit.errors import describe_validation
from stepkit.records import StageContext, StageFault, Usage
from stepkit.workspace.redact import redact

M = TypeVar("M", bound=BaseModel)
#: Seconds one model call may take (``--set llm_timeout_s=``).
DEFAULT_TIMEOUT_S = 600.0
#: Retries of a failed request, where the engine (or its SDK) retries (``--set llm_max_retries=``).
DEFAULT_MAX_RETRIES = 4


@dataclass
class Thread:
    """A conversation that several ``structured`` calls of one engine
    continue (the built-in coder's step): the first call's prefix opens it,
    later calls add their prompt.  An API engine keeps its ``messages``, in
    its own wire format; an agent CLI keeps the conversation itself and the
    thread holds its ``session`` id, which the next call resumes.  Both are
    JSON-serialisable, so the conversation can be kept in the run dir
    between the implement rounds of a step."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    session: str | None = None

    @property
    def started(self) -> bool:
        """Has a call opened it (a later call sends only its prompt)?"""
        return bool(self.messages) or self.session is not None


def setting(settings: Mapping[str, Any], name: str, kind: type, default: Any) -> Any:
    """``settings[name]`` as ``kind`` (``default`` when unset).

    :raises StageFault: the value is not a valid ``kind``."""
    value = settings.get(name)
    if value is None or value == "":
        return default
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise StageFault(f"setting {name}={value!r} is not a valid {kind.__name__}") from None


def node_model(
    node: str, ctx: StageContext, spec_model: str | None, default: str | None = None
) -> str | None:
    """The model for ``node``: ``--set model_<node>=``, ``[models] <node>``, the
    spec's model, ``[models] default``, then the engine's ``default`` (None
    leaves the choice to the engine's own default, never a model of another
    vendor)."""
    models = getattr(ctx.config, "models", None) or {}
    return (
        ctx.settings.get(f"model_{node}")
        or models.get(node)
        or spec_model
        or models.get("default")
        or default
    )


def parse_answer(text: str, schema: type[M], *, cut_at: str | None = None) -> tuple[M | None, str]:
    """The reply validated by ``schema`` (a fenced JSON block is unwrapped,
    secrets masked: the answer lands in the run state and the handoff), or
    None and what is wrong with it; ``cut_at``: where the reply was cut off
    (it is not read then)."""
    text = text.strip()
    if cut_at is not None:
        return None, f"the reply was cut off at {cut_at} ({len(text)} characters)"
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return schema.model_validate_json(redact(text)), ""
    except ValidationError as exc:
        return None, describe_validation(exc, limit=8)


def correction(problem: str, schema: type[BaseModel]) -> str:
    """What the model is told, once, when its answer was not accepted."""
    return (
        f"Your reply was not accepted: {problem}\nReply again with only the JSON object "
        f"that matches the {schema.__name__} schema, shorter if it was cut off."
    )


def record(ctx: StageContext, usage: Usage, **event: Any) -> None:
    """Add one call's usage to the run's and emit its ``llm_call`` event."""
    ctx.usage = ctx.usage.add(usage)
    ctx.emit("llm_call", **event, **usage.model_dump())


def fault_note(node: str, engine: str, model: str | None, what: str) -> str:
    """``LLM fault in node N (engine, model M): what.`` on one line, masked."""
    on = f"{engine}, model {model}" if model else engine
    text = f"LLM fault in node {node} ({on}): {what.rstrip('.')}."
    return " ".join(redact(text).split())
