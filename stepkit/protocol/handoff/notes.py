"""Append durable facts to the plan repo's NOTES.md, never rewriting what is there."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stepkit.workspace.files import atomic_write
from stepkit.workspace.redact import redact


def append_notes(notes_path: Path, facts: Sequence[str], step: int | str) -> list[str]:
    """Append durable facts to NOTES.md, never rewriting what is there.

    Creates the file with a ``# Notes`` header when missing.  A fact already
    present (whitespace and case ignored) is skipped; each new fact becomes
    one bullet ``- <fact> (step N)``, or ``- <fact> (<step>)`` when ``step``
    is a text (``from spec.md``: facts of a drafted plan).  The existing bytes stay an exact
    prefix of the new file, written atomically; the file's line ending
    (LF or CRLF) is kept.

    :return: the facts that were appended.
    """
    notes_path = Path(notes_path)
    existing = notes_path.read_bytes() if notes_path.exists() else b""
    text = existing.decode("utf-8", errors="replace")
    newline = "\r\n" if "\r\n" in text else "\n"
    seen = _norm(text)
    added: list[str] = []
    for fact in facts:
        one_line = redact(" ".join(str(fact).split()))
        one_line = one_line.removeprefix("- ")
        if not one_line or _norm(one_line) in seen:
            continue
        seen += "\n" + _norm(one_line)
        added.append(one_line)
    if not added:
        return []
    prefix = "" if existing else f"# Notes{newline}{newline}"
    if existing and not text.endswith(("\n", "\r")):
        prefix = newline
    source = f"step {step}" if isinstance(step, int) else step
    addition = prefix + "".join(f"- {fact} ({source}){newline}" for fact in added)
    notes_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(notes_path, existing + addition.encode("utf-8"))
    return added


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()
