"""Condensed evidence: what a model and a handoff get instead of a full log.

A parser plugin (``stepkit_condense_output``) picks out what matters — the
failing ids, the first error of each failure, the summary line — as an
:class:`~stepkit.records.Evidence`, and this module frames and caps its text:
it always starts with the command and its exit code, is at most
:data:`MAX_LINES` lines and :data:`MAX_BYTES` bytes, and ends with ``[kept X
of Y lines; full log: PATH]`` whenever any line of the output is missing from
it.  Secrets are masked before anything is kept.

A plugin's plain-string answer is read here, once, into the same type
(:func:`read_plain`): the judges read the fields, never the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from stepkit.lazyregex import lazy_compile
from stepkit.pluginmanager import first_answer
from stepkit.records import Evidence, FirstError
from stepkit.text import shown_bytes, strip_ansi, terminal_line
from stepkit.workspace.redact import redact

MAX_LINES = 200
MAX_BYTES = 16 * 1024
#: A longer line is clipped (minified code, progress bars on one line).
MAX_LINE_CHARS = 500
#: Lines kept from the end of a condensed text that is too long: the tool's
#: summary lines live there.
TAIL_KEEP = 12
SUMMARY_PREFIX = "summary: "
#: The heading of the parsers' per-failure error section.
ERRORS_HEADING = "first error of each failure:"
#: The label of a list of failing tests, whose items name test ids.
FAILING_TESTS_LABEL = "failing tests"


def clip_middle(text: str, max_chars: int, label: str = "output") -> str:
    """``text`` cut to about ``max_chars``: its head (two thirds) and tail (one
    third), cut at line boundaries, joined by ``[... label: N lines, M chars
    omitted ...]``.  Shorter text is returned as it is."""
    if len(text) <= max_chars:
        return text
    head = text[: max_chars * 2 // 3]
    head = head[: head.rfind("\n") + 1] or head
    tail = text[len(text) - max_chars // 3 :]
    tail = tail[tail.find("\n") + 1 :] if "\n" in tail else tail
    omitted = text[len(head) : len(text) - len(tail)]
    marker = f"[... {label}: {omitted.count(chr(10))} lines, {len(omitted)} chars omitted ...]\n"
    return head + marker + tail


def condense(
    pm,
    gate: str,
    command: str,
    output: str,
    exit_code: int | None,
    log_path: Path | str | None,
    *,
    total_lines: int | None = None,
    note: str | None = None,
) -> Evidence:
    """Condense a gate's output into capped, secret-free evidence.

    :param pm: the plugin manager whose ``stepkit_condense_output`` parsers run.
    :param gate: ``format``, ``lint``, ``build`` or ``tests``.
    :param command: the command that ran.
    :param output: its output (for a huge output: head and tail joined by an
        omission line).
    :param exit_code: its exit code, None when it never finished.
    :param log_path: the full log, named in the cut marker.
    :param total_lines: the line count of the full output when ``output`` is
        only its head and tail.
    :param note: a line placed right after the exit code (``timed out after
        300 s`` …).
    :return: what the parser found, its text framed: ``$ command`` /
        ``exit code: N`` / [note] / the parser's text / ``[kept X of Y lines;
        full log: PATH]`` (the last only when cut).
    """
    output = shown_bytes(redact(output))  # the evidence names a Latin-1 file as caf\xe9.txt
    try:
        answer, _plugin = first_answer(
            pm,
            "stepkit_condense_output",
            gate=gate,
            command=command,
            output=output,
            exit_code=exit_code,
            log_path=Path(log_path) if log_path else None,
        )
    except Exception as exc:  # noqa: BLE001 - a broken parser must not lose the gate's record
        answer = Evidence(
            text=f"[evidence parser failed: {type(exc).__name__}: {exc}; raw output follows]\n"
            f"{output}"
        )
    found = _masked(_typed(answer, output))
    text = found.text
    body = _clip_lines([terminal_line(line) for line in text.split("\n")])
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)

    header = [redact(f"$ {command}"), f"exit code: {'none' if exit_code is None else exit_code}"]
    if note:
        header.append(note)
    output_lines = output.split("\n")
    if output_lines and output_lines[-1] == "":
        output_lines.pop()
    total = max(total_lines or 0, len(output_lines))
    kept_set = {line.strip() for line in body}
    cut = total > len(output_lines) or any(
        (shown := terminal_line(line).strip()) and shown not in kept_set
        for line in strip_ansi(output).split("\n")
    )
    marker = f"[kept {{kept}} of {total} lines; full log: {log_path or '(none)'}]"

    body, capped = _cap(body, header, marker)
    if capped:
        cut = True
    if cut:
        kept = min(sum(1 for line in body if not _is_synthetic(line)), total)
        body = [*body, marker.format(kept=kept)]
    return found.model_copy(update={"text": "\n".join(header + body)})


def summary_of(evidence: Evidence, output: str) -> str:
    """The gate's one-line summary: the parser's, else the last non-empty
    line of the output."""
    if evidence.summary is not None and evidence.summary.strip():
        return evidence.summary.strip()[:200]
    return last_line(output)


def last_line(output: str) -> str:
    """The last non-empty line of ``output``, secrets masked, clipped to 200 chars."""
    for line in reversed(strip_ansi(output).split("\n")):
        if line.strip():
            return redact(line.strip())[:200]
    return ""


def _typed(answer: Evidence | str | None, output: str) -> Evidence:
    """A parser's answer as :class:`Evidence` (the output itself when none answered)."""
    if isinstance(answer, Evidence):
        return answer
    if answer is None:
        return Evidence(text=output)
    return read_plain(str(answer))


def _masked(found: Evidence) -> Evidence:
    """``found`` with secrets masked and colour codes dropped, in its text and its fields."""
    return Evidence(
        text=redact(strip_ansi(found.text)),
        failing=[redact(item) for item in found.failing],
        tests={redact(test_id): status for test_id, status in found.tests.items()},
        errors=[
            FirstError(heading=redact(e.heading), lines=[redact(line) for line in e.lines])
            for e in found.errors
        ],
        summary=None if found.summary is None else redact(found.summary),
    )


# -- a plain-string answer, read once at the hook border ----------------------

#: A list's heading as the built-in parsers render it: ``failing tests (2):``.
_LIST_HEADING = lazy_compile(r"^(?P<label>[a-z][a-z ]*) \(\d+\):$")
_KIND = lazy_compile(r"^(?P<kind>FAILED|ERROR)\s+")
_MESSAGE = lazy_compile(r" - .*$")


def read_plain(text: str) -> Evidence:
    """A plain-string answer (a third-party parser's) as :class:`Evidence`:
    its text, with what the built-in parsers' layout says read from it once
    (the hook's documented ``summary:`` line, the items of its ``label (N):``
    lists, a ``failing tests`` list's ids, the first error of each failure)."""
    lines = text.split("\n")
    failing: list[str] = []
    tests: dict[str, Literal["failed", "errored"]] = {}
    errors: list[FirstError] = []
    label = None
    for line in lines:
        heading = _LIST_HEADING.match(line)
        if heading:
            label = heading["label"]
        elif line == ERRORS_HEADING:
            label = ERRORS_HEADING
        elif label == ERRORS_HEADING and line.startswith("    "):
            if errors and line.strip():
                errors[-1].lines.append(line.strip())
        elif label == ERRORS_HEADING and line.startswith("  "):
            errors.append(FirstError(heading=line.strip()))
        elif label is not None and line.startswith("  ") and not line.startswith("   "):
            item = line.strip()
            failing.append(item)
            if label == FAILING_TESTS_LABEL:
                kind = _KIND.match(item)
                test_id = _MESSAGE.sub("", item[kind.end() :] if kind else item)
                if test_id not in tests or (kind and kind["kind"] == "ERROR"):
                    tests[test_id] = "errored" if kind and kind["kind"] == "ERROR" else "failed"
        else:
            label = None
    summary = next(
        (
            line[len(SUMMARY_PREFIX) :]
            for line in reversed(lines)
            if line.startswith(SUMMARY_PREFIX)
        ),
        None,
    )
    return Evidence(text=text, failing=failing, tests=tests, errors=errors, summary=summary)


def _clip_lines(lines: list[str]) -> list[str]:
    return [
        f"{line[:MAX_LINE_CHARS]}… [+{len(line) - MAX_LINE_CHARS} chars]"
        if len(line) > MAX_LINE_CHARS
        else line
        for line in lines
    ]


def _cap(body: list[str], header: list[str], marker: str) -> tuple[list[str], bool]:
    """Keep the head and the last :data:`TAIL_KEEP` lines of ``body`` within the
    line and byte budget (the header, the omission line and the marker count)."""

    def size(lines: list[str]) -> int:
        return sum(len(line.encode()) + 1 for line in lines)

    fixed = size(header) + len(marker.encode()) + 20  # + the digits of X
    if len(header) + len(body) + 1 <= MAX_LINES and fixed + size(body) <= MAX_BYTES:
        return body, False
    tail = body[-TAIL_KEEP:]
    line_budget = MAX_LINES - len(header) - len(tail) - 2
    byte_budget = MAX_BYTES - fixed - size(tail) - 64
    head: list[str] = []
    for line in body[:-TAIL_KEEP]:
        cost = len(line.encode()) + 1
        if len(head) >= line_budget or cost > byte_budget:
            break
        head.append(line)
        byte_budget -= cost
    omitted = len(body) - len(head) - len(tail)
    return head + [f"[... {omitted} lines omitted ...]"] + tail, True


def _is_synthetic(line: str) -> bool:
    return line.startswith(("[... ", SUMMARY_PREFIX))
