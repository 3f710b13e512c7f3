"""A pydantic model's JSON schema in the strict form OpenAI's structured
outputs take (``--engine codex``'s ``--output-schema``, ``--engine openai``'s
``response_format``): every object closed (``additionalProperties: false``)
with every property required, no ``default``, no keyword beside a ``$ref``.
A field with a default becomes required; the answer is still validated by
the model itself."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema, made strict (see the module docstring)."""
    return _strict(model.model_json_schema())


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
