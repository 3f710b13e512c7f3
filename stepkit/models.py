"""The base of stepkit's pydantic models: validation is built on first use.

pydantic builds each model's validator when its class is created, which at
import costs tens of milliseconds across stepkit's models, most of which a
given command never uses (``stepkit verify`` validates no checkpoint, no
graph, no coder result).  ``defer_build`` builds it when a model is first
validated, constructed or asked for its schema instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

_M = TypeVar("_M", bound=BaseModel)


class Model(BaseModel):
    """A pydantic model whose validator is built on first use."""

    model_config = ConfigDict(defer_build=True)


def view_of(model: type[_M], data: Mapping[str, Any]) -> _M:
    """``data`` read as ``model``: the keys ``model`` declares, validated
    (nested records become objects); the other keys are left out."""
    fields = model.model_fields
    return model.model_validate({key: value for key, value in data.items() if key in fields})
