"""Failure signatures: what the fix loops compare to tell "no progress" (the
same failure twice, :mod:`stepkit.protocol.fixloop`) from a changed failure.

A failure's signature is the gate, the failing test or file ids and the
first error line, read from the gate's typed evidence (what the output's
condenser found, :class:`~stepkit.records.Evidence`, never its rendered
text), normalised so that what changes from run to run without meaning
anything (temporary paths, durations, line numbers, addresses, timestamps)
does not make two identical failures look different.  Literal values in
messages are kept: ``assert 3 == 4`` becoming ``assert 5 == 4`` is progress.
Only when the condenser found nothing is the most specific error-looking
line of the tool's own output taken.
"""

from __future__ import annotations

import re

from stepkit.lazyregex import lazy_compile
from stepkit.records import GateResult
from stepkit.text import strip_ansi

MAX_IDS = 20

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

    :param failure: a gate result (its name, status and typed evidence are
        used; a failure it hides, pre-existing or flaky, is no part of it) or
        the text of a failure (a tool result, a coder's output).
    :return: ``"<gate> | <failing ids> | <first error line>"``; ``""`` for a
        gate that passed or did not run.
    """
    if not isinstance(failure, GateResult):
        return " | ".join(("", "", _normalise(_first_error(strip_ansi(str(failure))))))
    if failure.status in ("pass", "not_run"):
        return ""
    timed_out = ["timed out"] if failure.status == "timeout" else []
    found = failure.condensed
    if found is None:  # stepkit's own record of a gate that never ran its command
        return " | ".join(
            (failure.name, "", _normalise(timed_out[0] if timed_out else failure.summary))
        )
    hidden = [*failure.preexisting_failures, *failure.flaky]
    ids = sorted(
        {_normalise(item) for item in found.failing if not any(h in item for h in hidden)}
    )[:MAX_IDS]
    # with the parsers' list of failures, their messages already say it; the
    # tool's count line ("1 failed, 4 passed") is not an error
    if found.errors:
        error = found.first_error()
    elif ids:
        error = ""
    else:
        error = _first_error("\n".join([*timed_out, found.text]), framed=True)
    return " | ".join((failure.name, ",".join(ids), _normalise(error[:300])))


def _first_error(text: str, framed: bool = False) -> str:
    """The most specific error-looking line of a tool's output (``framed``:
    of condensed evidence, whose frame lines are stepkit's, not the tool's)."""
    lines = [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not (framed and _is_frame(line))
    ]
    for pattern in (_SPECIFIC_ERROR, _LOCATED_MESSAGE, _ERROR_LINE):
        for line in lines:
            if pattern.search(line) and not _is_summary(line):
                return line[:300]
    return lines[0][:300] if lines else ""


def _is_frame(line: str) -> bool:
    """The frame condensed evidence gets around a parser's text (command, exit code, cut marker)."""
    return line.startswith(("$ ", "exit code:", "[kept "))


def _is_summary(line: str) -> bool:
    """Framework banners that say nothing about the cause."""
    return bool(re.match(r"^[=\-_*]{3,}|^(FAILED|ERROR)\s+\S+::|^Traceback \(most recent", line))


def _normalise(text: str) -> str:
    for pattern, repl in _NORMALISERS:
        text = pattern.sub(repl, text)
    return text.strip()
