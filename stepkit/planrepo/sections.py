"""Markdown section helpers: find a ``## <name>`` section, follow code
fences, read bullets.

Lines keep their endings (split on "\\n" only, as the frontmatter parser
splits), so the edits built on these helpers can keep every other byte.
"""

from __future__ import annotations

import re

_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\Z")
#: a markdown bullet: its marker and its text
BULLET = re.compile(r"[ \t]*([-*+])[ \t]+(.*)\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only (as the frontmatter parser does)."""
    return _LINES.findall(text)


def plan_section(body: str, name: str) -> str | None:
    """The text under the ``## <name>`` heading of a markdown body (any level
    from 2 down, case-insensitive), up to the next heading of the same or a
    higher level; None when there is no such heading.  Headings inside fenced
    code blocks do not count.
    """
    lines = split_lines(body)
    span = section_span(lines, 0, name)
    if span is None:
        return None
    start, end = span
    return "".join(lines[start + 1:end]).strip()


def track_fence(line: str, fence: str | None) -> str | None:
    """Follow markdown code fences line by line: the marker of the fence open
    after ``line`` (``fence`` is the one open before it), or None."""
    match = _FENCE.match(line)
    if not match:
        return fence
    marker = match.group(1)
    if fence is None:
        return marker
    if marker[0] == fence[0] and len(marker) >= len(fence) and not line[match.end():].strip():
        return None
    return fence


def section_span(lines: list[str], start: int, name: str) -> tuple[int, int] | None:
    """(heading index, end index) of the first section called ``name`` at or
    after line ``start``."""
    wanted = " ".join(name.split()).lower()
    fence: str | None = None
    section: tuple[int, int] | None = None
    for i in range(start, len(lines)):
        line = lines[i].rstrip("\r\n")
        was_in_fence = fence is not None
        fence = track_fence(line, fence)
        if was_in_fence or fence is not None:
            continue
        heading = _HEADING.match(line)
        if heading is None:
            continue
        level = len(heading.group(1))
        if section is not None:
            if level <= section[1]:
                return section[0], i
            continue
        title = " ".join((heading.group(2) or "").split()).rstrip(":").strip().lower()
        if level >= 2 and title == wanted:
            section = (i, level)
    return (section[0], len(lines)) if section else None


def bullet_texts(lines: list[str]) -> set[str]:
    """The whitespace-normalised text of each bullet (continuation lines included)."""
    texts: list[str] = []
    for line in lines:
        found = BULLET.match(line.rstrip("\r\n"))
        if found:
            texts.append(found.group(2))
        elif texts and line.strip() and line[:1] in (" ", "\t"):
            texts[-1] += " " + line.strip()
    return {" ".join(t.split()) for t in texts}
