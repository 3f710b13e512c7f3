"""The failures of a lint or build gate, each keyed by file, rule and message.

A key (``src/a.py: F401 `os` imported but unused``) is what the baseline
compares between two trees, so it leaves out what an unrelated edit moves
(line and column numbers, the tree's absolute path) and keeps what tells two
errors apart: a second, different error in a file that already had one is a
new key.

The linters' machine-readable formats are read when the output is one (ruff
``--output-format=json``/``json-lines``, eslint ``-f json``, mypy ``-O
json``, cargo/clippy ``--message-format=json``); else their text formats:
ruff's concise and full (``CODE message`` over ``--> path:line:col``),
rustc/clippy (``error[E0308]: message`` over ``--> path``), mypy and pyright,
tsc, eslint's stylish, compact and unix formats, and any ``path:line[:col]:
message`` line.  Notes, help and info lines are never failures; warnings
count only in an output that has no error (``--max-warnings 0``, ``-W
error``: then the warnings are what failed).  An output none of these
reads is keyed by each line that names a location anywhere, its numbers
dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepkit.lazyregex import lazy_compile
from stepkit.workspace.jsonlines import json_object
from stepkit.workspace.loglines import lines_of

Level = str  # "error" | "warning" | "note"


@dataclass(frozen=True)
class Diagnostic:
    """One finding: its file, rule (may be empty), message and level."""

    file: str
    rule: str
    message: str
    level: Level = "error"

    def key(self) -> str:
        what = f"{self.rule} {self.message}" if self.rule else self.message
        return f"{self.file}: {' '.join(what.split())}"


def lint_keys(output: str | Iterable[str], roots: Iterable[Path] = ()) -> list[str]:
    """The failures in a lint or build output (its text, or its lines as a
    stream: :class:`~stepkit.workspace.loglines.LogLines`), keyed
    (first-seen order, each once): its errors, or its warnings when it has no error."""
    prefixes = sorted({f"{Path(r).as_posix().rstrip('/')}/" for r in roots}, key=len, reverse=True)
    output = lines_of(output)
    found = list(_json_diagnostics(output))
    if not found:
        found = list(_text_diagnostics(output))
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


def _json_diagnostics(lines: Iterable[str]) -> Iterator[Diagnostic]:
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
                yield from _json_item(item)


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


def _json_item(item: dict) -> Iterator[Diagnostic]:
    if "filePath" in item and isinstance(item.get("messages"), list):  # eslint -f json
        for m in item["messages"]:
            if isinstance(m, dict):
                level = "error" if m.get("severity") == 2 or m.get("fatal") else "warning"
                yield Diagnostic(
                    item["filePath"], str(m.get("ruleId") or ""), str(m.get("message", "")), level
                )
    elif item.get("reason") == "compiler-message" and isinstance(
        item.get("message"), dict
    ):  # cargo
        message = item["message"]
        spans = [s for s in message.get("spans") or [] if isinstance(s, dict)]
        primary = next((s for s in spans if s.get("is_primary")), spans[0] if spans else {})
        code = (message.get("code") or {}).get("code") or ""
        level = _level(str(message.get("level", "")))
        if primary:
            yield Diagnostic(
                str(primary.get("file_name", "")), code, str(message.get("message", "")), level
            )
    elif "filename" in item and "code" in item and "message" in item:  # ruff json, json-lines
        yield Diagnostic(str(item["filename"]), str(item.get("code") or ""), str(item["message"]))
    elif "file" in item and "severity" in item and "message" in item:  # mypy -O json
        yield Diagnostic(
            str(item["file"]),
            str(item.get("code") or ""),
            str(item["message"]),
            _level(str(item["severity"])),
        )


def _level(word: str) -> Level:
    word = word.lower()
    if word.startswith("error") or word in ("fatal", "failure-note"):
        return "note" if word == "failure-note" else "error"
    return "warning" if word.startswith("warn") else "note"


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
#: ruff's full format head (``F401 [*] message``) and rustc's (``error[E0308]: message``)
_RUFF_HEAD = lazy_compile(
    r"^(?P<code>[A-Z]+\d+|invalid-syntax|[a-z]+(?:-[a-z]+)+) (?:\[\*\] )?(?P<msg>\S.*)$"
)
_RUSTC_HEAD = lazy_compile(
    r"^(?P<level>error|warning|note|help)(?:\[(?P<code>[^\]]+)\])?: (?P<msg>.+)$"
)
_ARROW = lazy_compile(rf"^\s*--> {_WHERE}\s*$")
#: the lint's name a rustc/clippy diagnostic names under its arrow
_LINT_NAME = lazy_compile(
    r"^\s*= note: `[#-]\[?(?:deny|warn)\((?P<lint>[\w:]+)\)\]?` on by default"
    r"|^\s*= note: `-D (?P<dlint>[\w:-]+)` implied by"
)
#: eslint: a file alone on its line, then ``  3:5  error  message  rule``
_BARE_FILE = lazy_compile(r"^(?:/|\.{0,2}/|[A-Za-z]:\\)?[\w./\\@+-]+\.[A-Za-z]\w*$")
_STYLISH = lazy_compile(
    r"^\s+\d+:\d+\s+(?P<level>error|warning)\s+(?P<msg>.+?)(?:\s{2,}(?P<rule>[@\w/.-]+))?\s*$"
)
#: a trailing ``[code]`` (mypy) or ``(rule)`` / ``[Error/rule]`` (eslint compact, unix)
_TRAILING_RULE = lazy_compile(
    r"\s+\[(?P<code>[\w/@.-]+)\]$|\s+\[(?:Error|Warning)/(?P<rule>[\w/@.-]+)\]$"
)
_ESLINT_COMPACT = lazy_compile(
    r"^(?P<file>\S.*?): line \d+, col \d+, (?P<level>Error|Warning) - (?P<msg>.+?)(?: \((?P<rule>[\w/@.-]+)\))?$"
)
#: the unindented lines within a rustc or ruff diagnostic: source lines, help and notes
_WITHIN = lazy_compile(r"^(?:\d+\s*\||\||=|\.\.\.|help:|note:|(?:\d+\s+)?[-+~]\s)")
_SUMMARY = lazy_compile(r"^(?:Found \d+ errors?|\d+ errors?|Success:|All checks passed)")


def _text_diagnostics(lines: Iterable[str]) -> Iterator[Diagnostic]:
    head: tuple[str, str, Level] | None = None  # a diagnostic waiting for its --> line
    pending: Diagnostic | None = None  # a rustc diagnostic that may still name its lint
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
            lint = _LINT_NAME.match(line)
            if lint:
                pending = Diagnostic(
                    pending.file,
                    pending.rule or lint["lint"] or lint["dlint"],
                    pending.message,
                    pending.level,
                )
                continue
            if not line.strip() or not (line[0].isspace() or _WITHIN.match(line)):
                yield pending  # a blank line, or one that is none of its parts, ends it
                pending = None
        if (rustc := _RUSTC_HEAD.match(line)) and not _LOCATED.match(line):
            if pending is not None:
                yield pending
                pending = None
            head = (rustc["code"] or "", rustc["msg"], _level(rustc["level"]))
            continue
        if (
            (ruff := _RUFF_HEAD.match(line))
            and not _LOCATED.match(line)
            and not _SUMMARY.match(line)
        ):
            if pending is not None:
                yield pending
                pending = None
            head = (ruff["code"], ruff["msg"], "error")
            continue
        if pending is not None:
            continue  # the source, carets and help of the diagnostic waiting to end
        if compact := _ESLINT_COMPACT.match(line):
            yield Diagnostic(
                compact["file"], compact["rule"] or "", compact["msg"], _level(compact["level"])
            )
            continue
        stylish = _STYLISH.match(line)
        if stylish and current_file:
            yield Diagnostic(current_file, stylish["rule"] or "", stylish["msg"], stylish["level"])
            continue
        if _BARE_FILE.match(line.strip()):
            current_file = line.strip()
            continue
        located = _LOCATED.match(line)
        if located and located["rest"]:
            yield _located(located["file"], located["rest"])
    if pending is not None:
        yield pending


def _located(file: str, rest: str) -> Diagnostic:
    """A ``path:line:col: …`` line: its level word, rule and message."""
    level: Level = "error"
    rule = ""
    word = _LEVEL_WORD.match(rest)
    if word:
        level = _level(word["level"])
        rule, rest = word["code"] or "", word["msg"]
    trailing = _TRAILING_RULE.search(rest)
    if trailing:
        rule = rule or trailing["code"] or trailing["rule"] or ""
        rest = rest[: trailing.start()]
    code = re.match(r"^(?P<code>[A-Z]+\d+|TS\d+)\b:?\s*(?:\[\*\]\s*)?(?P<msg>.*)$", rest)
    if code and not rule:
        rule, rest = code["code"], code["msg"]
    return Diagnostic(file, rule, rest.strip(), level)
