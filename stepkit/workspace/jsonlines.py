"""JSON lines: the one reader of text that holds one JSON object per line
among other lines (``go test -json``, the coding CLIs' event streams)."""

from __future__ import annotations

import json
from typing import Any


def json_lines(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(every line of ``text`` that is a JSON object, parsed; every other
    line, as it was), each in order.  A line that starts like an object but
    does not parse, or parses to something else, is an other line."""
    objects: list[dict[str, Any]] = []
    other: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        value = None
        if stripped.startswith("{"):
            try:
                value = json.loads(stripped)
            except ValueError:
                value = None
        if isinstance(value, dict):
            objects.append(value)
        else:
            other.append(line)
    return objects, other
