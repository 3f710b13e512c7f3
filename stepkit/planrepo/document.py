"""Reading a markdown file's YAML frontmatter.

:func:`parse_document` splits a plan or handoff into its frontmatter
mapping and its body.  The common frontmatter shape (plain ``key: value``
lines, integer lists) is read without building a YAML node tree; anything
else goes to the YAML loader, with the same answer.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import frontmatter
import yaml

_YAML = frontmatter.YAMLHandler()
_SIMPLE_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(.*)\Z")
_SIMPLE_ITEM = re.compile(r"( *)- +(0|[1-9][0-9]*)(?:[ \t]+#.*)?[ \t]*\Z")
_QUOTED = re.compile(r"(?:\"([^\"\\]*)\"|'([^']*)')(?:[ \t]+#.*)?\Z")
_COMMENT = re.compile(r"[ \t]#")
_DECIMAL = re.compile(r"(?:0|[1-9][0-9]*)\Z")
# Anything but printable characters that YAML does not treat as line breaks
_NOT_PLAIN = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
_NOT_SIMPLE = object()


class DocumentError(ValueError):
    """A markdown file's frontmatter cannot be read; the message is one line."""


def parse_document(text: str) -> tuple[dict[str, Any], str]:
    """Split markdown text into its YAML frontmatter mapping and its body.

    Uses python-frontmatter's YAML handler (libyaml's CSafeLoader when
    available).  Text without frontmatter gives ``({}, text)``.  Raises
    :class:`DocumentError` with a one-line reason when the frontmatter is
    malformed.
    """
    text = text.removeprefix("\ufeff")
    stripped = text.strip()
    if not _YAML.detect(stripped):
        return {}, stripped
    try:
        block, body = _YAML.split(stripped)
    except ValueError:
        raise DocumentError("malformed frontmatter: no closing '---' line") from None
    try:
        data = _simple_mapping(block)
        if data is None:
            data = _YAML.load(block)
    except yaml.MarkedYAMLError as exc:
        skipped = text[: len(text) - len(text.lstrip())].count("\n")
        line = exc.problem_mark.line + 1 + skipped if exc.problem_mark else None
        where = f" (line {line})" if line else ""
        raise DocumentError(f"malformed frontmatter: {exc.problem or exc.context}{where}") from None
    except Exception as exc:  # noqa: BLE001 - e.g. "date: 2024-13-01" raises ValueError inside the loader
        raise DocumentError(
            f"malformed frontmatter: {type(exc).__name__}: {exc}".splitlines()[0]
        ) from None
    if data is None:
        return {}, body.strip()
    if not isinstance(data, dict):
        raise DocumentError(f"malformed frontmatter: a YAML {type(data).__name__}, not a mapping")
    return {str(key): value for key, value in data.items()}, body.strip()


def _simple_mapping(block: str) -> dict[str, Any] | None:
    """Read the common frontmatter shape without building a YAML node tree.

    Handles ``key: value`` lines whose values are plain or simply quoted
    strings, decimal integers, and flow or block lists of decimal integers,
    with comments and blank lines; returns None for anything else, which then
    goes to the YAML loader.  Plain scalars are typed by PyYAML's own
    resolver, so the answer is what ``yaml.safe_load`` gives.  Worth it
    because the loader's Python-level constructor dominates ``stepkit
    status`` on repos of thousands of steps.
    """
    if _NOT_PLAIN.search(block):
        return None
    data: dict[str, Any] = {}
    list_key = None  # the key with an empty value whose block list may follow
    indent = None
    for raw in block.split("\n"):
        line = raw.removesuffix("\r")
        stripped = line.strip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        item = _SIMPLE_ITEM.match(line) if list_key is not None else None
        if item and indent in (None, item.group(1)):
            indent = item.group(1)
            if data[list_key] is None:
                data[list_key] = []
            data[list_key].append(int(item.group(2)))
            continue
        key_match = _SIMPLE_KEY.match(line)
        if key_match is None or "\r" in line or not _is_str(key_match.group(1)):
            return None
        key, rest = key_match.groups()
        if rest and rest[0] not in " \t":
            return None
        value = _simple_value(rest.strip(" \t"))
        if value is _NOT_SIMPLE:
            return None
        data[key] = value
        list_key, indent = (key, None) if value is None else (None, None)
    return data


def _simple_value(text: str) -> Any:
    """The value of one ``key: text`` line, or _NOT_SIMPLE."""
    if not text or text[0] == "#":
        return None
    if text[0] in "'\"":
        quoted = _QUOTED.match(text)
        if quoted is None:
            return _NOT_SIMPLE
        return quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
    comment = _COMMENT.search(text)
    if comment:
        text = text[: comment.start()].rstrip(" \t")
    if text[0] == "[" and text[-1] == "]":
        pieces = [p.strip(" \t") for p in text[1:-1].split(",")]
        if len(pieces) > 1 and not pieces[-1]:
            pieces.pop()  # a trailing comma
        if pieces == [""]:
            return []
        if all(_DECIMAL.match(p) for p in pieces):
            return [int(p) for p in pieces]
        return _NOT_SIMPLE
    if text[0] in _INDICATORS or ": " in text or text.endswith(":") or "#" in text:
        return _NOT_SIMPLE
    if _plain_tag(text) == _STR_TAG:
        return text
    if _DECIMAL.match(text):
        return int(text)
    return _NOT_SIMPLE


def _is_str(key: str) -> bool:
    return _plain_tag(key) == _STR_TAG


@functools.lru_cache(maxsize=4096)
def _plain_tag(text: str) -> str:
    """The YAML tag PyYAML's resolver gives an unquoted scalar."""
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))
