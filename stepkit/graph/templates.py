"""State templates: the ``{key}`` fields of questions, end-node outputs and
the strings in an approval or input node's ``updates``.

Templates are ``str.format`` fields over the state; a list renders as
``- item`` lines, a missing or None value as ``(none)``.
"""

from __future__ import annotations

import re
import string
from typing import Any


def template_keys(template: str) -> list[str]:
    """The state keys a ``{key}`` template reads.

    :raises ValueError: the template is malformed.
    """
    keys = []
    for _, field, _, _ in string.Formatter().parse(template):
        if field is None:
            continue
        base = re.split(r"[.\[]", field, maxsplit=1)[0]
        if not base or base.isdigit():
            raise ValueError(f"'{{{field}}}' names no state key")
        keys.append(base)
    return keys


def template_problems(template: str, known: set[str]) -> list[str]:
    """Problems of one template against the keys the graph can set."""
    try:
        keys = template_keys(template)
    except ValueError as exc:
        return [f"bad template: {exc}"]
    return [
        f"unknown key '{key}' (not in initial_state or any node's outputs)"
        for key in dict.fromkeys(keys)
        if key not in known
    ]


class _None(str):
    """``(none)``, and so is every field of it (``{review[files]}`` of a
    state without ``review``)."""

    def __getitem__(self, key: Any) -> _None:
        return self


_NONE = _None("(none)")


class _TemplateState(dict):
    """State as templates see it: lists become bullet lines, missing or None
    values (or fields of them) ``(none)``."""

    def __getitem__(self, key: str) -> Any:
        value = dict.get(self, key)
        if value is None:
            return _NONE
        if isinstance(value, list):
            return "\n".join(f"- {_item_text(item)}" for item in value) or "(none)"
        if isinstance(value, dict):
            return _Fields(value)
        return value


class _Fields(dict):
    """A mapping in the state as templates see it: a missing or None field ``(none)``."""

    def __getitem__(self, key: str) -> Any:
        value = dict.get(self, key)
        return _NONE if value is None else value


def _item_text(item: Any) -> str:
    if isinstance(item, dict) and "name" in item and "status" in item:  # a gate record
        from stepkit.records import GateResult

        return GateResult.model_validate(item).status_line()
    return str(item)


def render_template(template: str, state: dict[str, Any]) -> str:
    """Fill ``{key}`` fields from the state (see :class:`_TemplateState`)."""
    return template.format_map(_TemplateState(state))


def render_values(value: Any, state: dict[str, Any]) -> Any:
    """``value`` with every string in it (at any depth) rendered as a template."""
    if isinstance(value, str):
        return render_template(value, state)
    if isinstance(value, dict):
        return {k: render_values(v, state) for k, v in value.items()}
    if isinstance(value, list):
        return [render_values(v, state) for v in value]
    return value


def strings_in(value: Any) -> list[str]:
    """Every string in ``value`` (at any depth): the templates :func:`render_values` renders."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []
