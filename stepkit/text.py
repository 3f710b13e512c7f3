"""Text as a terminal shows it: colour codes dropped, a line after its last
carriage return, everything on one printable line.

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
    printable = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in joined)
    return " ".join(printable.split())
