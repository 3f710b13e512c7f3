"""The failures of a lint or build gate, each keyed by file, rule and message.

A key (``src/a.py: F401 `os` imported but unused``) is what the baseline
compares between two trees, so it leaves out what an unrelated edit moves
(line and column numbers, the tree's absolute path) and keeps what tells two
errors apart: a second, different error in a file that already had one is a
new key.

How a tool's output reads into diagnostics is its declaration's
(:class:`~stepkit.workspace.tools.Tool`: one item of its JSON output, the
head of a diagnostic located on a ``-->`` line under it, a diagnostic on
one line or under a line naming its file, the rule at the end of a line);
the mechanisms are here.  An output that is JSON (a document, or JSON
lines, also under a wrapper's header) is read item by item, the first
declaration that reads an item deciding; else its text, line by line:
declared heads and the source lines, help and notes within them,
declared one-line and under-a-file diagnostics, and any ``path:line[:col]:
message`` line (a level word opening the message, a declared rule at its
end, or an upper-case code opening it).  Notes, help and info lines are
never failures; warnings count only in an output that has no error
(``--max-warnings 0``, ``-W error``: then the warnings are what failed).
An output none of these reads is keyed by each line that names a location
anywhere, its numbers dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from stepkit.lazyregex import lazy_compile
from stepkit.workspace.diagnostics import Diagnostic, Level
from stepkit.workspace.diagnostics import level as _level
from stepkit.workspace.jsonlines import json_object
from stepkit.workspace.loglines import lines_of
from stepkit.workspace.tools import Tools, builtin_tools

__all__ = ["JSON_DOCUMENT_CHARS", "Diagnostic", "Level", "lint_keys"]


def lint_keys(
    output: str | Iterable[str], roots: Iterable[Path] = (), judged_by: Tools | None = None
) -> list[str]:
    """The failures in a lint or build output (its text, or its lines as a
    stream: :class:`~stepkit.workspace.loglines.LogLines`), keyed
    (first-seen order, each once): its errors, or its warnings when it has no error.

    :param judged_by: the declared tools (default: the built-in ones)."""
    table = judged_by or builtin_tools()
    prefixes = sorted({f"{Path(r).as_posix().rstrip('/')}/" for r in roots}, key=len, reverse=True)
    output = lines_of(output)
    found = list(_json_diagnostics(output, table))
    if not found:
        found = list(_text_diagnostics(output, table))
    errors = [d for d in found if d.level == "error"]
    chosen = errors or [d for d in found if d.level == "warning"]
    keys: list[str] = []
    for key in [d.key() for d in chosen] or _located_anywhere(output):
        for prefix in prefixes:
            key = key.replace(prefix, "")
        if key not in keys:
            keys.append(key)
    return keys


#: ``file.ext:12:3``, ``file.ext(12,3)``, ``file.ext:12`` anywhere in a line, and those numbers
_ANYWHERE = lazy_compile(r"[\w./\\@+-]*\w\.[A-Za-z]\w*(?::\d+(?::\d+)?|\(\d+(?:,\d+)?\))")
_NUMBERS = lazy_compile(r"(?<=[\w)\]])(?::\d+)+|\(\d+(?:,\d+)?\)")
_NOT_A_FAILURE = lazy_compile(r"\b(?:note|help|info|hint):", re.IGNORECASE)


def _located_anywhere(lines: Iterable[str]) -> list[str]:
    """For formats none of the rules below reads (``e: file:///A.kt:3:5
    Unresolved reference``, credo's boxes): each line naming a location,
    without its numbers, notes left out."""
    return [
        " ".join(_NUMBERS.sub("", line).split())
        for line in lines
        if _ANYWHERE.search(line) and not _NOT_A_FAILURE.search(line)
    ]


# -- machine-readable formats -------------------------------------------------


def _json_array(text: str) -> list[Any]:
    """A line that is a JSON array (eslint's ``-f json`` under npm's header); [] when not."""
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def _json_diagnostics(lines: Iterable[str], table: Tools) -> Iterator[Diagnostic]:
    """Diagnostics from a JSON document (of up to :data:`JSON_DOCUMENT_CHARS`)
    or JSON lines (none: not JSON)."""
    documents: list[Any] = []
    text = _json_document(lines)
    if text is not None:
        try:
            documents = [json.loads(text)]
        except ValueError:
            documents = []
    if not documents:  # JSON lines, or a document under a wrapper's header (npm run lint)
        for line in lines:
            if line.startswith("{"):
                documents.extend([value] if (value := json_object(line)) is not None else [])
            elif line.startswith("["):
                documents.append(_json_array(line))
    for document in documents:
        for item in document if isinstance(document, list) else [document]:
            if isinstance(item, dict):
                yield from _json_item(item, table)


#: Characters of an output read whole as one JSON document (eslint ``-f json``
#: prints one); a larger output is read as JSON lines only.
JSON_DOCUMENT_CHARS = 32 * 1024 * 1024


def _json_document(lines: Iterable[str]) -> str | None:
    """The output as one text when it opens like a JSON document and is not
    larger than :data:`JSON_DOCUMENT_CHARS` (None otherwise)."""
    kept: list[str] = []
    size = 0
    for line in lines:
        if not kept and not line.strip():
            continue
        if not kept and not line.lstrip().startswith(("[", "{")):
            return None
        kept.append(line)
        size += len(line) + 1
        if size > JSON_DOCUMENT_CHARS:
            return None
    return "\n".join(kept) if kept else None


def _json_item(item: dict[str, Any], table: Tools) -> list[Diagnostic]:
    """The diagnostics of the first declaration that reads ``item`` ([] when none does)."""
    return next((found for read in table.json_items if (found := read(item)) is not None), [])


# -- text formats -------------------------------------------------------------

_ANSI = lazy_compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
#: ``path:line[:col]`` (or ``path(line,col)``), then the rest of the line
_WHERE = r"(?P<file>[^\s:()][^:()]*?\.[A-Za-z]\w*)(?::\d+(?::\d+)?(?:-\d+(?::\d+)?)?:?|\(\d+(?:,\d+)?\):?)"
_LOCATED = lazy_compile(rf"^\s*{_WHERE}\s*(?:-\s+)?(?P<rest>.*)$")
#: a level word opening the rest of a located line (mypy, pyright, tsc, gcc)
_LEVEL_WORD = lazy_compile(
    r"^(?P<level>error|warning|note|info|help|hint|fatal error)(?:\[(?P<code>[^\]]+)\])?\s*:?\s*(?P<msg>.*)$",
    re.IGNORECASE,
)
#: where a diagnostic whose head a tool declares is (the line under its head)
_ARROW = lazy_compile(rf"^\s*--> {_WHERE}\s*$")
#: a file alone on its line, which the diagnostics under it are in
_BARE_FILE = lazy_compile(r"^(?:/|\.{0,2}/|[A-Za-z]:\\)?[\w./\\@+-]+\.[A-Za-z]\w*$")
#: the unindented lines within a diagnostic under a head: source lines, help and notes
_WITHIN = lazy_compile(r"^(?:\d+\s*\||\||=|\.\.\.|help:|note:|(?:\d+\s+)?[-+~]\s)")


def _first_match(patterns: Iterable[re.Pattern[str]], line: str) -> re.Match[str] | None:
    return next((m for pattern in patterns if (m := pattern.match(line))), None)


def _text_diagnostics(lines: Iterable[str], table: Tools) -> Iterator[Diagnostic]:
    head: tuple[str, str, Level] | None = None  # a diagnostic waiting for its --> line
    pending: Diagnostic | None = None  # a located diagnostic that may still name its rule
    current_file: str | None = None
    for raw in lines:
        line = _ANSI.sub("", raw).rstrip()
        if "\r" in line:
            line = line.rsplit("\r", 1)[-1]
        arrow = _ARROW.match(line)
        if arrow and head is not None:
            rule, message, level = head
            pending = Diagnostic(arrow["file"], rule, message, level)
            head = None
            continue
        if pending is not None:
            note = _first_match(table.rule_notes, line)
            if note:
                pending = Diagnostic(
                    pending.file, pending.rule or note["rule"], pending.message, pending.level
                )
                continue
            if not line.strip() or not (line[0].isspace() or _WITHIN.match(line)):
                yield pending  # a blank line, or one that is none of its parts, ends it
                pending = None
        opened = None if _LOCATED.match(line) else _first_match(table.heads, line)
        if opened:
            if pending is not None:
                yield pending
                pending = None
            head = (opened["code"] or "", opened["msg"], _said_level(opened))
            continue
        if pending is not None:
            continue  # the source, carets and help of the diagnostic waiting to end
        if one := _first_match(table.lines, line):
            yield Diagnostic(one["file"], _said_rule(one), one["msg"], _said_level(one))
            continue
        under = _first_match(table.under_file, line)
        if under and current_file:
            yield Diagnostic(current_file, _said_rule(under), under["msg"], _said_level(under))
            continue
        if _BARE_FILE.match(line.strip()):
            current_file = line.strip()
            continue
        located = _LOCATED.match(line)
        if located and located["rest"]:
            yield _located(located["file"], located["rest"], table)
    if pending is not None:
        yield pending


def _said_level(m: re.Match[str]) -> Level:
    """The level a declared pattern's ``level`` group says (none: an error)."""
    said = m.groupdict().get("level")
    return _level(said) if said else "error"


def _said_rule(m: re.Match[str]) -> str:
    """The rule a declared pattern's ``rule`` group says (none: no rule)."""
    return m.groupdict().get("rule") or ""


def _located(file: str, rest: str, table: Tools) -> Diagnostic:
    """A ``path:line:col: …`` line: its level word, rule and message."""
    level: Level = "error"
    rule = ""
    word = _LEVEL_WORD.match(rest)
    if word:
        level = _level(word["level"])
        rule, rest = word["code"] or "", word["msg"]
    # the leftmost declared rule, the first declared of those at one place
    found = [m for pattern in table.trailing_rules if (m := pattern.search(rest))]
    trailing = min(found, key=lambda m: m.start()) if found else None
    if trailing:
        rule = rule or _said_rule(trailing)
        rest = rest[: trailing.start()]
    code = re.match(r"^(?P<code>[A-Z]+\d+|TS\d+)\b:?\s*(?:\[\*\]\s*)?(?P<msg>.*)$", rest)
    if code and not rule:
        rule, rest = code["code"], code["msg"]
    return Diagnostic(file, rule, rest.strip(), level)
