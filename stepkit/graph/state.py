"""The run state's typed model: which keys a graph's state has, each one's
type, and how a node's update accumulates into it.

A graph names its model with ``state: module:Class`` (a subclass of
:class:`RunState`); a graph without one gets :class:`RunState` itself, which
takes any key.  Like a typed channel with a reducer, each field of the model
is either replaced by an update (the default) or, when its annotation
carries :data:`APPEND` (``Annotated[list[str], APPEND]``), appended to: an
update holds only the new items.  A model with ``extra="forbid"`` is strict:

- the graph validator (:mod:`stepkit.graph.load`) refuses a node that
  declares a key the model lacks, an ``initial_state`` value of the wrong
  type, and an ``append`` list that is not the model's append fields;
- the engine refuses, as a node fault, an update of a key the model lacks
  or of a value of the wrong type;
- ``stepkit resume`` refuses a checkpoint whose state has such a key or value.

Besides its fields, every state has ``<node>_fault`` and ``<node>_answer``
(text, or None once cleared) for each node of its graph: the engine's record of a node's fault
and of the answer an approval or input node got.  The engine keeps the
state as plain JSON data; the model checks it and gives typed views of it
(:func:`typed`), it never replaces it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cache
from typing import Any

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from stepkit.models import Model, lazy_view
from stepkit.records import Usage


class _Append:
    """The reducer marker of an append field (see :data:`APPEND`)."""

    def __repr__(self) -> str:
        return "APPEND"


#: ``Annotated[list[X], APPEND]``: a node's update of the field holds the
#: items it adds; the engine appends them.
APPEND = _Append()
#: Keys the engine writes for a node of the graph: ``<node id><suffix>``.
NODE_KEY_SUFFIXES = ("_fault", "_answer")


class RunState(Model):
    """The keys every run has: the run inputs and what the engine records
    itself.  As a graph's model (the default), it also takes any other key."""

    model_config = ConfigDict(extra="allow")

    #: the run's free-text request
    prompt: str | None = None
    #: the step asked for (``next`` or a number)
    step_request: str | int | None = None
    #: tokens and cost the run spent so far
    usage: Usage = Field(default_factory=Usage)
    #: a stage fault's one-paragraph note
    fault_note: str = ""
    #: why the run ended at the failure node
    failure_reason: str = ""
    #: the node that faulted last
    last_fault_node: str = ""
    #: processes a node's commands left running that the engine ended, one
    #: line each: ``a process the coder started outlived its node and was ended: CMD``
    processes_ended: list[str] = Field(default_factory=list)

    @classmethod
    def reshaped(cls, state: dict[str, Any], written_in: int) -> dict[str, Any]:
        """``state``, from a checkpoint written in format ``written_in``, with
        the keys an older format held in another shape brought to this
        model's, before it is checked against the model: it reads only the
        values it expects and leaves any other for the check to refuse.
        The default: the state as it is."""
        return state

    @classmethod
    def upgraded(cls, state: dict[str, Any], written_in: int) -> dict[str, Any]:
        """``state``, from a checkpoint written in format ``written_in``
        (:data:`stepkit.engine.checkpoint.CHECKPOINT_FORMAT`) and checked
        against this model, in the shape the model has now; a model whose
        keys changed shape overrides it.  The default: the state as it is."""
        return state


#: The keys the engine records itself, in every state.
ENGINE_KEYS = tuple(RunState.model_fields)


def is_strict(model: type[RunState]) -> bool:
    """Whether ``model`` names every key its state may have."""
    return model.model_config.get("extra") == "forbid"


def append_fields(model: type[RunState]) -> frozenset[str]:
    """The fields of ``model`` whose updates are appended."""
    return frozenset(name for name, info in model.model_fields.items() if APPEND in info.metadata)


def has_key(model: type[RunState], key: str, node_ids: Collection[str]) -> bool:
    """Whether a state of ``model`` (in a graph of these nodes) may hold ``key``
    (as :func:`_adapter` tells, without building a validator)."""
    return key in model.model_fields or _is_node_key(key, node_ids) or not is_strict(model)


def value_problem(
    model: type[RunState], key: str, value: Any, node_ids: Collection[str]
) -> str | None:
    """Why ``value`` cannot be the state's ``key`` (one phrase), or None.
    A value of an append field is the whole list (or the items an update adds)."""
    adapter = _adapter(model, key, _is_node_key(key, node_ids))
    if adapter is None:
        return f"'{key}' is not a key of the state ({model.__name__})"
    try:
        adapter.validate_python(value)
    except ValidationError as exc:
        return f"'{key}' {_first_error(exc)}"
    return None


def state_problem(
    model: type[RunState],
    state: Mapping[str, Any],
    node_ids: Collection[str],
    also: Collection[str] = (),
) -> str | None:
    """The first key of ``state`` that ``model`` refuses (the key unknown or
    its value of the wrong type), one phrase; keys in ``also`` (values
    given on the command line) are taken as they are."""
    if not isinstance(state, Mapping):
        return f"the state is {type(state).__name__}, not a mapping"
    for key, value in state.items():
        if key not in also:
            problem = value_problem(model, key, value, node_ids)
            if problem:
                return problem
    return None


def typed(model: type[RunState], state: Mapping[str, Any]) -> Any:
    """A typed, read-only view of ``state``: ``model``'s fields, each validated
    the first time it is read (:func:`~stepkit.models.lazy_view`); keys it
    does not declare are left out.  A run's report reads a few fields of a
    state the engine has already checked: validating all of them built the
    whole model's validator (about 15 ms) for nothing."""
    return lazy_view(model, state)


def _is_node_key(key: str, node_ids: Collection[str]) -> bool:
    return any(
        key.endswith(suffix) and key[: -len(suffix)] in node_ids for suffix in NODE_KEY_SUFFIXES
    )


@cache
def _adapter(model: type[RunState], key: str, node_key: bool) -> TypeAdapter[Any] | None:
    """The validator of ``key``'s values; None when the state has no such key."""
    info = model.model_fields.get(key)
    if info is not None:
        # None is the annotation of a field annotated None, which TypeAdapter validates
        return TypeAdapter(info.annotation)  # type: ignore[arg-type]
    if node_key:
        return TypeAdapter(str | None)  # a node clears its fault record with None
    return TypeAdapter(Any) if not is_strict(model) else None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    got = type(error.get("input")).__name__
    return f"{'at ' + where + ': ' if where else ''}{error['msg'].lower()} (got {got})"
