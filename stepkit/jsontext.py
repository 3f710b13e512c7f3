"""JSON records that hold any string Python holds, a lone surrogate included.

A byte that is not UTF-8 (of a Latin-1 file name, of a tool's output) is
kept as a surrogate by ``surrogateescape``, the decoding the file system and
git readers use.  UTF-8 cannot encode it, and pydantic's JSON encoder and
parser refuse it, so a record written and read here writes it as its
``\\uXXXX`` escape, which :func:`json.loads` reads back as the same
surrogate: the file name survives the record byte for byte.

A leaf module (it imports nothing of stepkit).
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

_SURROGATE = re.compile("[\ud800-\udfff]")
Model = TypeVar("Model")


def json_safe(text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) that
    encodes as UTF-8: each surrogate written as its ``\\uXXXX`` escape."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps(value: Any, default: Any = None, indent: int | None = None) -> str:
    """:func:`json.dumps` (compact unless ``indent``), non-ASCII kept, its
    surrogates escaped."""
    separators = (",", ":") if indent is None else (",", ": ")
    return json_safe(
        json.dumps(value, default=default, ensure_ascii=False, indent=indent, separators=separators)
    )


def model_json(model: Any, fallback: Any = None, indent: int | None = None) -> str:
    """A pydantic model's JSON text (compact unless ``indent``), surrogates
    escaped.  pydantic's own encoder (several times faster than
    :func:`json.dumps`) writes it unless it meets a surrogate: in a value it
    raises, in a dict key it writes U+FFFD instead, silently, so text that
    holds one is written again the slow way."""
    try:
        text = model.model_dump_json(fallback=fallback, indent=indent)
    except ValueError:
        text = None
    if text is not None and "\ufffd" not in text:
        return text
    from pydantic_core import to_jsonable_python

    return dumps(
        model.model_dump(),
        indent=indent,
        default=lambda value: to_jsonable_python(value, fallback=fallback),
    )


def model_from_json(cls: type[Model], text: str | bytes) -> Model:
    """``cls`` validated from JSON text :func:`model_json` wrote (pydantic's
    parser refuses an escaped lone surrogate; :func:`json.loads` reads it).

    :raises ValueError: the text is not JSON or not a valid ``cls``.
    """
    try:
        return cls.model_validate_json(text)  # type: ignore[attr-defined]
    except ValueError:
        return cls.model_validate(json.loads(text))  # type: ignore[attr-defined]
