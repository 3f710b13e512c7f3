"""JSON lines: the one reader of text that holds one JSON object per line
among other lines (``go test -json``, the coding CLIs' event streams)."""

from __future__ import annotations

import json
from typing import Any


def json_object(line: str) -> dict[str, Any] | None:
    """The JSON object one line holds; None when it holds none (it does not
    start like an object, does not parse, or parses to something else)."""
    stripped = line.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def json_lines(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(every line of ``text`` that is a JSON object, parsed; every other
    line, as it was), each in order."""
    objects: list[dict[str, Any]] = []
    other: list[str] = []
    for line in text.splitlines():
        value = json_object(line)
        if value is not None:
            objects.append(value)
        else:
            other.append(line)
    return objects, other
