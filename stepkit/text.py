"""Text as a terminal shows it: colour codes dropped, a line after its last
carriage return, everything on one printable line; and text that is not
stepkit's (a model's) made harmless to show: its control characters visible,
no line of it taken for an outcome line.

A leaf module (it imports nothing of stepkit), so that the records, the
evidence and the parsers can all use it without importing each other.
"""

from __future__ import annotations

import re
import unicodedata

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
#: Characters that reorder how a terminal shows a line (bidirectional overrides).
_BIDI_CONTROLS = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))


def strip_ansi(text: str) -> str:
    """Text without terminal colour and cursor codes."""
    return _ANSI.sub("", text)


def terminal_line(line: str) -> str:
    """A line as a terminal shows it: the text after its last carriage return
    (progress bars rewrite themselves), without trailing blanks."""
    line = line.rstrip()
    return line.rsplit("\r", 1)[-1] if "\r" in line else line


def one_line(text: str) -> str:
    """``text`` as one printable line: colour codes dropped, each line as a
    terminal shows it (the text after its last carriage return), lines joined
    by a space, bidirectional overrides dropped, every other control
    character a space, runs of blanks one."""
    text = str(text)
    if text.isprintable():  # the usual case
        return " ".join(text.split())
    lines = (terminal_line(line) for line in strip_ansi(text).split("\n"))
    joined = " ".join(lines).translate(_BIDI_CONTROLS)
    printable = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in joined
    )
    return " ".join(printable.split())


def first_of(items: list[str], limit: int) -> str:
    """The first ``limit`` of ``items`` on one line, then ``and N more``."""
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


#: A commit subject longer than this is cut (git's conventional limit).
SUBJECT_MAX = 72


def commit_subject(text: str) -> str:
    """``text`` cut to :data:`SUBJECT_MAX` characters at a word's end, an
    ellipsis ending what was cut (a word longer than that is cut inside)."""
    if len(text) <= SUBJECT_MAX:
        return text
    head = text[: SUBJECT_MAX - 1]
    words = head.rsplit(None, 1)[0] if text[SUBJECT_MAX - 1] != " " and " " in head else head
    return words.rstrip(" ,;:-") + "…"


def commit_paragraphs(summary: str, step: int | str | None, title: str) -> list[str]:
    """A step's commit message as paragraphs (``git commit -m`` each): the
    summary's subject, the whole summary when the subject cut it, and
    ``Step N: title``; nothing of the summary is left out."""
    flat = " ".join(summary.split())
    named = f"Step {step}: {title}".rstrip(": ")
    if not flat:
        return [commit_subject(named)]
    subject = commit_subject(flat)
    return [subject, *([flat] if subject != flat else []), named]


#: Characters that move, hide or reorder what a terminal shows, or that
#: ``splitlines`` reads as a line break: every control character (Unicode
#: category Cc) but newline and tab, so an escape sequence is shown as its
#: text and never obeyed; every format character (Cf: the bidirectional
#: overrides and isolates, the zero-width space and joiners, the word
#: joiner, the byte order mark, the tag characters, …); the line and
#: paragraph separators (Zl, Zp); and the lone surrogates (see
#: :data:`_SURROGATE`), which no terminal can show.  The categories as of
#: Unicode 15.1; tests/unit/test_visible.py holds the class to them.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
    "\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\ud800-\udfff]"
)
#: A lone surrogate: how ``surrogateescape`` (the file system's and git's
#: decoding here) keeps a byte that is not UTF-8, e.g. of a Latin-1 file name.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # the byte surrogateescape kept
    return match.group().encode("unicode_escape").decode("ascii")


def visible(text: str) -> str:
    """``text`` with each such character written as its escape (``\\r``,
    ``\\x1b``, ``\\u202e``; a byte that was not UTF-8 as ``\\xe9``):
    newlines and tabs kept, letters, marks, symbols and emoji as they are.
    Applying it twice changes nothing more."""
    if text.isascii() and text.isprintable():  # no control character: nothing to escape
        return text
    return _INVISIBLE.sub(_escape, text)


def shown_bytes(text: str) -> str:
    """``text`` with each byte that was not UTF-8 written as its escape, so
    ``caf\\xe9.txt`` is how a Latin-1 file name is shown and written as UTF-8
    (the other characters are left as they are)."""
    return _SURROGATE.sub(_escape, text)


def guard_lines(text: str, words: tuple[str, ...], keep_first: bool = False) -> str:
    """``text`` made :func:`visible`, each of its lines that starts with one
    of ``words`` (the outcome sentinels) quoted with ``> `` (but the first,
    with ``keep_first``: the outcome's own line)."""
    lines = visible(text).split("\n")
    start = 1 if keep_first else 0
    return "\n".join(
        lines[:start]
        + [f"> {line}" if line.lstrip().startswith(words) else line for line in lines[start:]]
    )
