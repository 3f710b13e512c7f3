"""The base of stepkit's pydantic models: validation is built on first use.

pydantic builds each model's validator when its class is created, which at
import costs tens of milliseconds across stepkit's models, most of which a
given command never uses (``stepkit verify`` validates no checkpoint, no
graph, no coder result).  ``defer_build`` builds it when a model is first
validated, constructed or asked for its schema instead.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    """A pydantic model whose validator is built on first use."""

    model_config = ConfigDict(defer_build=True)
