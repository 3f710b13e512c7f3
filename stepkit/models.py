"""The base of stepkit's pydantic models: validation is built on first use.

pydantic builds each model's validator when its class is created, which at
import costs tens of milliseconds across stepkit's models, most of which a
given command never uses (``stepkit verify`` validates no checkpoint, no
graph, no coder result).  ``defer_build`` builds it when a model is first
validated, constructed or asked for its schema instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, TypeAdapter

_M = TypeVar("_M", bound=BaseModel)


class Model(BaseModel):
    """A pydantic model whose validator is built on first use."""

    model_config = ConfigDict(defer_build=True)


def lazy_view(model: type[_M], data: Mapping[str, Any]) -> _M:
    """``data`` read as ``model``, each field validated the first time it is
    read and kept (an absent one is the field's default): a node that reads
    three fields of a large state pays for those three.  It has the model's
    fields and ``model_fields_set`` (the keys ``data`` holds), nothing else:
    a view to read, not a model to dump or copy."""
    return cast(_M, _LazyView(model, data))


class _LazyView:
    __slots__ = ("_data", "_model", "_read")

    def __init__(self, model: type[BaseModel], data: Mapping[str, Any]) -> None:
        self._model, self._data = model, data
        self._read: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name in self._read:
            return self._read[name]
        info = self._model.model_fields.get(name)
        if info is None:
            raise AttributeError(f"{self._model.__name__} has no field {name!r}")
        if name in self._data:
            value = _field_adapter(self._model, name).validate_python(self._data[name])
        else:  # the factories of stepkit's models take no argument
            factory = info.default_factory
            value = factory() if factory is not None else info.default  # type: ignore[call-arg]
        self._read[name] = value
        return value

    @property
    def model_fields_set(self) -> set[str]:
        return {key for key in self._data if key in self._model.model_fields}


@cache
def _field_adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """The validator of one field of ``model``."""
    return TypeAdapter(model.model_fields[name].annotation)  # type: ignore[arg-type]
