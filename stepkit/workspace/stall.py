"""Failure signatures: what the fix loops compare to tell "no progress" (the
same failure twice, :mod:`stepkit.protocol.fixloop`) from a changed failure.

A failure's signature is the gate, the failing test or file ids (as the
evidence parsers listed them) and the first error line, normalised so that what changes from run to run without meaning
anything (temporary paths, durations, line numbers, addresses, timestamps)
does not make two identical failures look different.  Literal values in
messages are kept: ``assert 3 == 4`` becoming ``assert 5 == 4`` is progress.
"""

from __future__ import annotations

import re

from stepkit.lazyregex import lazy_compile
from stepkit.records import GateResult
from stepkit.text import strip_ansi
from stepkit.workspace.evidence import ERRORS_HEADING, SUMMARY_PREFIX

MAX_IDS = 20

# the heading of a list of failing ids in condensed evidence ("failing tests (2):"),
# as every built-in parser renders it (plugins/evidence/_shared.render)
_ID_LIST_HEADING = lazy_compile(r"^[a-z][a-z ]* \(\d+\):$")
# the line that names the error itself (preferred over banners like "Traceback …")
_SPECIFIC_ERROR = lazy_compile(
    r"^(E\s+)?[\w.]*(Error|Exception|Failure)\b(:|$)|^error(\[\w+\])?:|:\s*error\b|^panic:"
    r"|timed out",
    re.IGNORECASE,
)
# a message at a source location (go test, linters): "file.go:9: got Hi"
_LOCATED_MESSAGE = lazy_compile(r"^\S+\.\w+:\d+(:\d+)?:\s*(?!in\s)\S")
_ERROR_LINE = lazy_compile(
    r"\b(error|errors|exception|failed|failure|fail|assert\w*|panic\w*|traceback|fatal|"
    r"not found|cannot|undefined|timed out)\b|^E\s",
    re.IGNORECASE,
)
_NORMALISERS = tuple(
    (lazy_compile(p, re.IGNORECASE), repl)
    for p, repl in (
        (r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?", "<time>"),
        (r"\b\d\d:\d\d:\d\d(\.\d+)?\b", "<time>"),
        (r"(/private)?/(tmp|var/folders/[^/\s]+/[^/\s]+/T|var/tmp)/[^\s:'\"]*", "<tmp>"),
        (r"\b[A-Za-z]:\\[^\s:'\"]*\\(Temp|tmp)\\[^\s:'\"]*", "<tmp>"),
        (r"\b0x[0-9a-f]{4,}\b", "0x?"),
        (r"\b\d+(\.\d+)?\s?(ms|s|sec|secs|seconds|µs|us|ns|m|min)\b", "<dur>"),
        (r"\bin <dur>|\(<dur>\)", "<dur>"),
        (r"(\.\w{1,5}|\)|\w):\d+(:\d+)?\b", r"\1:N"),  # file.py:12:5 → file.py:N
        (r"\b(line|lines|col|column)\s+\d+", r"\1 N"),
        (r"\bpid[ =:]\s*\d+", "pid N"),
        (r"\s+", " "),
    )
)


def failure_signature(failure: GateResult | str) -> str:
    """A normalised one-line signature of a failure.

    :param failure: a gate result (its name, status and evidence are used) or
        the text of a failure (a tool result, a coder's output).
    :return: ``"<gate> | <failing ids> | <first error line>"``; ``""`` for a
        gate that passed or did not run.
    """
    gate: str
    if isinstance(failure, GateResult):
        if failure.status in ("pass", "not_run"):
            return ""
        gate, text = failure.name, failure.evidence or failure.summary
        if failure.status == "timeout" and "timed out" not in text:
            text = f"timed out\n{text}"
    else:
        gate, text = "", strip_ansi(str(failure))
    ids = _failing_ids(text)
    # with the parsers' list of failures, their messages already say it; the
    # tool's count line ("1 failed, 4 passed") is not an error
    error = _first_error(text) if not ids or ERRORS_HEADING in text else ""
    return " | ".join((gate, ",".join(ids), _normalise(error)))


def _failing_ids(text: str) -> list[str]:
    """The items of the evidence's failing-id lists: the parsers already found
    them, so the stall check reads their result instead of parsing tools again."""
    ids, in_list = set(), False
    for line in text.splitlines():
        if _ID_LIST_HEADING.match(line):
            in_list = True
        elif in_list and line.startswith("  ") and not line.startswith("   "):
            ids.add(_normalise(line.strip()))
        else:
            in_list = False
    return sorted(ids)[:MAX_IDS]


def _first_error(text: str) -> str:
    """The first error line: from the evidence's "first error of each failure"
    section when a parser wrote one, else the most specific error-looking line."""
    lines = text.splitlines()
    if ERRORS_HEADING in lines:
        details = lines[lines.index(ERRORS_HEADING) + 1 :]
        for line in details:
            if line.startswith("    ") and line.strip():
                return line.strip()[:300]
            if not line.startswith("  "):
                break
    lines = [line.strip() for line in lines if line.strip() and not _is_frame(line)]
    for pattern in (_SPECIFIC_ERROR, _LOCATED_MESSAGE, _ERROR_LINE):
        for line in lines:
            if pattern.search(line) and not _is_summary(line):
                return line[:300]
    return lines[0][:300] if lines else ""


def _is_frame(line: str) -> bool:
    """The evidence's own framing (command, exit code, summary, cut marker, list headings)."""
    return line.startswith(("$ ", "exit code:", SUMMARY_PREFIX, "[kept ")) or bool(
        _ID_LIST_HEADING.match(line)
    )


def _is_summary(line: str) -> bool:
    """Framework banners that say nothing about the cause."""
    return bool(re.match(r"^[=\-_*]{3,}|^(FAILED|ERROR)\s+\S+::|^Traceback \(most recent", line))


def _normalise(text: str) -> str:
    for pattern, repl in _NORMALISERS:
        text = pattern.sub(repl, text)
    return text.strip()
