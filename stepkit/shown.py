"""Where text leaves stepkit for a person or a client: made visible there.

Paths, test ids, reports, findings, flags, commit messages, a coder's
output and a gate's evidence are the coder's, the model's or the project's
text.  A terminal obeys the escape sequences and carriage returns in them
and reorders a line at a bidirectional override; a client that shows a
``--json`` or MCP answer does the same.  So each sink, not each string,
passes what it is given through :func:`stepkit.text.visible` (every
control, format and separator character written as its escape, newlines
and tabs kept):

- the terminal: :func:`shown_streams` wraps ``sys.stdout`` and
  ``sys.stderr`` of a command (every ``print`` of the CLI), and
  :func:`console` is the rich console of the prompts and the progress
  display, which makes each piece of text visible and keeps only the
  styles and cursor moves rich itself writes;
- the JSON a command prints with ``--json`` and the MCP server's answers:
  :func:`shown` makes every string of the value visible, keys included,
  before it is encoded (:func:`shown_json`), so a field added later is
  covered too.

What is stored (the checkpoint, the logs, the records) is not passed
through here: it stays byte for byte what was seen.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

from stepkit.text import visible


def shown(value: Any) -> Any:
    """``value`` with every string in it (mapping keys, list and tuple
    items, nested) made :func:`~stepkit.text.visible`; other values as they are."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, Mapping):
        return {shown(key): shown(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [shown(item) for item in value]
    return value


def shown_json(
    value: Any, indent: int | None = 2, ensure_ascii: bool = False, default: Any = None
) -> str:
    """``value`` as JSON text (:func:`json.dumps` with these options), its
    strings :func:`shown` first (after ``default`` turned what JSON cannot
    hold into what it can), so none carries a lone surrogate either."""
    if default is not None:
        value = _jsonable(value, default)
    try:
        plain = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):  # not JSON as it is (e.g. a Mapping that is no dict)
        plain = None
    if plain is not None and not any(mark in plain for mark in _CHANGED_BY_VISIBLE):
        # no string of it holds a character visible() writes as its escape: shown(value)
        # is value, and the walk over every string (210,000 in a 10,000-step status) is saved
        if indent is None and ensure_ascii:
            return plain
        return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)
    return json.dumps(shown(value), indent=indent, ensure_ascii=ensure_ascii)


#: What ``json.dumps(..., ensure_ascii=True)`` writes for each character that
#: :func:`~stepkit.text.visible` may change: a ``\\u`` escape for any character
#: beyond printable ASCII (DEL included), a short escape for three controls (newline and
#: tab, kept, are ``\\n`` and ``\\t``).  A text without any of these holds no such
#: character; one with them (a backslash before a ``u`` too) is walked, as it always was.
_CHANGED_BY_VISIBLE = ("\\u", "\\r", "\\b", "\\f")


def _jsonable(value: Any, default: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _jsonable(item, default) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item, default) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return _jsonable(default(value), default)


class ShownStream:
    """A text stream that writes to ``stream`` what it is given, made visible."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(visible(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, …
        return getattr(self.stream, name)


@contextlib.contextmanager
def shown_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` wrapped in a :class:`ShownStream`
    while the block runs, then put back."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (
        stream if stream is None or isinstance(stream, ShownStream) else ShownStream(stream)
        for stream in saved
    )
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def raw(stream: Any) -> Any:
    """The stream a :class:`ShownStream` writes to (``stream`` itself otherwise)."""
    return stream.stream if isinstance(stream, ShownStream) else stream


def console(stderr: bool = True, **options: Any) -> Any:
    """A rich console on stderr (or stdout) that shows text visibly: a
    string is made visible before rich reads it (rich would drop a carriage
    return, and wraps lines by the visible text's width), and each segment
    rendered from anything else is too; rich's own styles and cursor moves
    (its control segments) are written as they are.  ``options`` go to
    rich's :class:`~rich.console.Console` (a ``file`` included, for tests)."""
    from rich.console import Console
    from rich.segment import Segment

    class _ShownConsole(Console):
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(visible(text), **kwargs)

        def render(self, renderable: Any, options: Any = None) -> Any:
            for segment in super().render(renderable, options):
                if segment.control or segment.text.isprintable():
                    yield segment
                else:
                    yield Segment(visible(segment.text), segment.style, segment.control)

    if "file" not in options:
        options["file"] = raw(sys.stderr if stderr else sys.stdout)
    return _ShownConsole(**options)
