"""The JSON schemas of the answers sent to models.

:func:`lean_json_schema` is a pydantic model's schema without what is
written for developers: no ``title`` (pydantic derives one from every name)
and no model docstring (the ``description`` of an object schema); the
field descriptions, which are what the model reads, stay.

:func:`strict_json_schema` is the lean schema in the strict form OpenAI's
structured outputs take (``--engine codex``'s ``--output-schema``,
``--engine openai``'s ``response_format``): every object closed
(``additionalProperties: false``) with every property required, no
``default``, no keyword beside a ``$ref``.  A field with a default becomes
required; the answer is still validated by the model itself."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def lean_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema without titles and model docstrings."""
    return _lean(model.model_json_schema())


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s lean JSON schema, made strict (see the module docstring)."""
    return _strict(lean_json_schema(model))


def _lean(node: Any) -> Any:
    if isinstance(node, list):
        return [_lean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "description" and "properties" in node):
            continue
        if key in ("properties", "$defs"):  # maps of names to schemas: a field may be named "title"
            out[key] = {name: _lean(schema) for name, schema in value.items()}
        else:
            out[key] = _lean(value)
    return out


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return {"$ref": node["$ref"]}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "default":
            continue
        if key in ("properties", "$defs"):  # maps of names to schemas: every name kept
            out[key] = {name: _strict(schema) for name, schema in value.items()}
        else:
            out[key] = _strict(value)
    if out.get("type") == "object":
        out["additionalProperties"] = False
        out["required"] = list(out.get("properties", {}))
        out.setdefault("properties", {})
    return out
