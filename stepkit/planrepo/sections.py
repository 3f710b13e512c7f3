"""Markdown sections, code fences and list items: the one parser of each.

:func:`outline` finds every ATX heading outside code fences and every fenced
block of a markdown body in one pass over the only lines that can open one
(the text between them is never looked at line by line, so a 10 MB handoff
stays fast).  A section runs from its heading to the next heading of the
same or a higher level; names match case-insensitively, blanks collapsed
and a trailing colon dropped.  :func:`plan_section` (plans) and the handoff
check (:mod:`stepkit.protocol.handoff.check`) both read sections through it.

A list item is a line whose first non-blank is a marker (``-``, ``*``,
``+``, ``1.``, ``1)``) followed by a blank (:data:`LIST_ITEM`): the one
bullet rule, read by :func:`list_item`, :func:`list_items` and
:func:`strip_list_markers`.

Lines keep their endings (:func:`split_lines` splits on "\\n" only, as the
frontmatter parser splits), so the edits built on these helpers can keep
every other byte.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\Z")
#: the only lines that can open or close a fence or a section
_SPECIAL_LINE = re.compile(r"^ {0,3}(?:`{3,}|~{3,}|#{1,6}(?![^ \t\r\n]))[^\n]*", re.MULTILINE)
#: the one bullet rule: indent, marker (``-``, ``*``, ``+``, ``1.``, ``1)``), a blank, the text
LIST_ITEM = re.compile(
    r"(?P<indent>[ \t]*)(?P<marker>[-*+]|\d{1,9}[.)])[ \t]+(?P<text>.*?)[ \t\r\n]*\Z"
)
#: a list item at the top level of its list: indented at most three spaces
_TOP_INDENT = 3


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only (as the frontmatter parser does)."""
    return _LINES.findall(text)


def without_comments(text: str) -> str:
    """``text`` without its HTML comments (``<!-- ... -->``, one left open runs to
    the end): what a reader of the rendered markdown sees."""
    return _COMMENT.sub("", text)


def track_fence(line: str, fence: str | None) -> str | None:
    """Follow markdown code fences line by line: the marker of the fence open
    after ``line`` (``fence`` is the one open before it), or None."""
    match = _FENCE.match(line)
    if not match:
        return fence
    marker = match.group(1)
    if fence is None:
        return marker
    if marker[0] == fence[0] and len(marker) >= len(fence) and not line[match.end() :].strip():
        return None
    return fence


def heading_of(line: str) -> tuple[int, str] | None:
    """``(level, title)`` of a heading line (outside code fences), or None."""
    match = _HEADING.match(line.rstrip("\r\n"))
    return (len(match.group(1)), match.group(2) or "") if match else None


def section_key(title: str) -> str:
    """How a section's name is matched: case-insensitive, blanks collapsed,
    a trailing colon dropped."""
    return " ".join(title.split()).rstrip(":").strip().lower()


@dataclass(slots=True)
class Heading:
    """One heading outside code fences (character offsets into the body).

    :ivar start: where its line starts; :ivar content_start: where the
        line after it starts; :ivar end: where its section ends (the next
        heading of the same or a higher level, or the end of the body);
        :ivar content_end: ``end`` without the line break before that heading.
    """

    level: int
    title: str
    start: int
    content_start: int
    end: int = 0
    content_end: int = 0
    #: the name as sections are matched (:func:`section_key`)
    key: str = field(init=False)

    def __post_init__(self) -> None:
        self.key = section_key(self.title)


@dataclass
class Outline:
    """Where a body's headings and fenced code blocks are."""

    body: str
    headings: list[Heading] = field(default_factory=list)
    #: (start, end) of every fenced code block, fences included
    fenced: list[tuple[int, int]] = field(default_factory=list)
    _by_key: dict[str, list[Heading]] | None = field(default=None, repr=False)

    def named(self, name: str) -> list[Heading]:
        """Every heading called ``name``, in order."""
        if self._by_key is None:
            self._by_key = {}
            for heading in self.headings:
                self._by_key.setdefault(heading.key, []).append(heading)
        return self._by_key.get(section_key(name), [])

    def find(
        self, name: str, levels: Sequence[int] = (2, 3, 4, 5, 6), last: bool = False
    ) -> Heading | None:
        """The first (``last``: the last) heading called ``name`` at one of ``levels``."""
        found = [h for h in self.named(name) if h.level in levels]
        return (found[-1] if last else found[0]) if found else None

    def content(self, heading: Heading) -> str:
        """The text under ``heading``, up to the end of its section."""
        return self.body[heading.content_start : heading.content_end]

    def without(self, cuts: Sequence[tuple[int, int]]) -> str:
        """The body without its code blocks and the spans in ``cuts``."""
        pieces, at = [], 0
        for start, end in sorted([*self.fenced, *cuts]):
            if start > at:
                pieces.append(self.body[at:start])
            at = max(at, end)
        pieces.append(self.body[at:])
        return "\n".join(pieces)


def outline(body: str) -> Outline:
    """The headings and fenced blocks of ``body``, in one pass (see the module docstring)."""
    found = Outline(body)
    fence: str | None = None
    fence_start = 0
    for match in _SPECIAL_LINE.finditer(body):
        line = match.group(0).rstrip("\r")
        was_in_fence = fence is not None
        fence = track_fence(line, fence)
        if not was_in_fence and fence is not None:
            fence_start = match.start()
        elif was_in_fence and fence is None:
            found.fenced.append((fence_start, match.end()))
        level_title = None if was_in_fence or fence is not None else heading_of(line)
        if level_title is not None:
            found.headings.append(
                Heading(*level_title, match.start(), min(match.end() + 1, len(body)))
            )
    if fence is not None:
        found.fenced.append((fence_start, len(body)))
    open_sections: list[Heading] = []  # the headings whose section has not ended yet, levels rising
    for heading in found.headings:
        while open_sections and open_sections[-1].level >= heading.level:
            ended = open_sections.pop()
            ended.end, ended.content_end = (
                heading.start,
                max(ended.content_start, heading.start - 1),
            )
        open_sections.append(heading)
    for heading in open_sections:
        heading.end = heading.content_end = len(body)
    return found


def plan_section(body: str, name: str) -> str | None:
    """The text under the ``## <name>`` heading of a markdown body (any level
    from 2 down, case-insensitive), up to the next heading of the same or a
    higher level; None when there is no such heading.  Headings inside fenced
    code blocks do not count.
    """
    found = outline(body)
    heading = found.find(name)
    return None if heading is None else found.content(heading).strip()


def section_span(lines: list[str], start: int, name: str) -> tuple[int, int] | None:
    """(heading index, end index) of the first section called ``name`` at or
    after line ``start``."""
    text = "".join(lines[start:])
    heading = outline(text).find(name)
    if heading is None:
        return None
    first = start + text.count("\n", 0, heading.start)
    end = len(lines) if heading.end >= len(text) else start + text.count("\n", 0, heading.end)
    return first, end


def list_item(line: str) -> tuple[str, str] | None:
    """``(marker, text)`` of a list item line (:data:`LIST_ITEM`), or None."""
    match = LIST_ITEM.match(line)
    return (match["marker"], match["text"]) if match else None


def strip_list_markers(text: str) -> str:
    """``text`` without the list markers that open it (``- 1. x`` is ``x``)."""
    while (item := list_item(text)) is not None and item[1]:
        text = item[1]
    return text.strip()


def list_items(lines: Sequence[str]) -> list[str]:
    """The text of each top-level list item (indented at most three
    spaces); every other non-blank line after one (a continuation, a nested
    item) is joined to it by a space."""
    items: list[str] = []
    for line in lines:
        match = LIST_ITEM.match(line)
        if match and len(match["indent"].expandtabs(4)) <= _TOP_INDENT and match["text"]:
            items.append(match["text"].strip())
        elif line.strip() and items:
            items[-1] += " " + line.strip()
    return items


def bullet_texts(lines: list[str]) -> set[str]:
    """The whitespace-normalised text of each list item (continuation lines included)."""
    return {" ".join(text.split()) for text in list_items(lines)}
