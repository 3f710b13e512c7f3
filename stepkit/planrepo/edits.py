"""Byte-preserving edits of plan files: :func:`set_status` and
:func:`append_edge_case` add or change only what they must, keep every
other byte (newline style, quoting, comments), and replace the file
atomically.  A file they cannot edit safely raises :class:`PlanError` and
stays as it was.
"""

from __future__ import annotations

import re
from pathlib import Path

from stepkit.errors import PlanError
from stepkit.planrepo.checks import STATUSES
from stepkit.planrepo.document import DocumentError, parse_document
from stepkit.planrepo.sections import bullet_texts, list_item, section_span, split_lines
from stepkit.workspace.files import atomic_write

_DASHES = re.compile(r"-{3,}\s*\Z")
_STATUS_LINE = re.compile(
    r"(?P<key>status[ \t]*:[ \t]*)"
    r"(?P<value>\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\n]|'')*'|[^#\r\n]*?)"
    r"(?P<rest>[ \t]*(?:#[^\r\n]*)?\r?\n?)\Z"
)


def set_status(path: Path | str, status: str) -> None:
    """Set the ``status:`` value in a plan's frontmatter, changing nothing else.

    Only the value on the ``status:`` line changes (its quoting and any
    trailing comment stay); without such a line, ``status: <status>`` is
    added just before the closing ``---`` (or a frontmatter block is added
    when the file has none), using the file's own newline style.  The result
    is re-parsed before it is written atomically, so a file this cannot edit
    safely raises :class:`PlanError` and stays as it was.
    """
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    path = Path(path)
    text = _read_text(path, "set the status of")
    try:
        old_metadata, _ = parse_document(text)
    except DocumentError as exc:
        raise PlanError(f"{path}: cannot set the status: {exc}") from None
    bom, content = ("\ufeff", text[1:]) if text.startswith("\ufeff") else ("", text)
    lines = split_lines(content)
    newline = _newline_of(content)
    span = frontmatter_span(lines)
    if span is None:
        new_text = f"{bom}---{newline}status: {status}{newline}---{newline}{content}"
    else:
        opening, closing = span
        found = [i for i in range(opening + 1, closing) if _STATUS_LINE.match(lines[i])]
        if found:
            lines[found[-1]] = _with_status_value(lines[found[-1]], status)
        elif "status" in old_metadata:
            raise PlanError(f"{path}: cannot find a plain 'status:' line in the frontmatter")
        else:
            lines.insert(closing, f"status: {status}{newline}")
        new_text = bom + "".join(lines)
    try:
        new_metadata, _ = parse_document(new_text)
    except DocumentError:
        new_metadata = None
    if new_metadata != {**old_metadata, "status": status}:
        raise PlanError(
            f"{path}: cannot set the status safely (unusual 'status:' line); file left unchanged"
        )
    if new_text != text:
        _write_atomic(path, new_text.encode("utf-8"))


def append_edge_case(path: Path | str, text: str) -> bool:
    """Add ``- <text>`` as the last bullet of the plan's Edge cases section.

    The text is made one line (whitespace collapsed).  The section is created
    as ``## Edge cases`` at the end of the file when missing.  Returns False
    and changes nothing when an identical bullet is already there.  Every
    other byte of the file is kept; the write is atomic.
    """
    item = " ".join(text.split())
    bullet = list_item(item)
    if bullet:
        item = bullet[1]
    if not item:
        raise ValueError("an edge case needs some text")
    path = Path(path)
    content = _read_text(path, "add an edge case to")
    lines = split_lines(content)
    newline = _newline_of(content)
    frontmatter = frontmatter_span(lines)
    body_start = frontmatter[1] + 1 if frontmatter else 0
    span = section_span(lines, body_start, "Edge cases")
    if span is None:
        tail = "" if not content or content.endswith("\n") else newline
        if content.strip() and not content.endswith(("\n\n", "\r\n\r\n")):
            tail += newline
        new_text = f"{content}{tail}## Edge cases{newline}{newline}- {item}{newline}"
    else:
        start, end = span
        marker, last = "-", start
        for i in range(start + 1, end):
            if lines[i].strip():
                last = i
            found = list_item(lines[i])
            if found and found[0] in "-*+":  # a numbered item's marker is not repeated
                marker = found[0]
        if item in bullet_texts(lines[start + 1 : end]):
            return False
        if lines[last].endswith("\n"):
            lines.insert(last + 1, f"{marker} {item}{newline}")
        else:  # the section ends the file without a final newline: keep it that way
            lines[last] += f"{newline}{marker} {item}"
        new_text = "".join(lines)
    _write_atomic(path, new_text.encode("utf-8"))
    return True


def _newline_of(text: str) -> str:
    end = text.find("\n")
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def frontmatter_span(lines: list[str]) -> tuple[int, int] | None:
    """Indexes of the opening and closing ``---`` lines, found the way
    python-frontmatter finds them (leading blank lines skipped)."""
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first == len(lines) or not _DASHES.match(lines[first].strip()):
        return None
    for i in range(first + 1, len(lines)):
        if _DASHES.match(lines[i]):
            return first, i
    return None


def _with_status_value(line: str, status: str) -> str:
    match = _STATUS_LINE.match(line)
    assert match is not None
    key, value, rest = match.group("key", "value", "rest")
    if value[:1] in ("'", '"'):
        status = value[0] + status + value[0]
    if not key[-1].isspace():
        key += " "
    return f"{key}{status}{rest}"


def _read_text(path: Path, action: str) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PlanError(f"{path}: cannot {action} it: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanError(f"{path}: cannot {action} it: not UTF-8") from None


def _write_atomic(path: Path, data: bytes) -> None:
    """:func:`stepkit.workspace.files.atomic_write`, its errors as one-line PlanErrors."""
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise PlanError(f"{path}: cannot write: {exc.strerror or exc}") from None
