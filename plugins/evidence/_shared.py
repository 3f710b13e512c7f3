"""Parsing helpers shared by the evidence condensers.

Every condenser returns its findings through :func:`render`, typed
(:class:`~stepkit.records.Evidence`), their text rendered from them so all of
them read alike: the failing ids first (the part that must survive any cut),
then the first error lines of each failure, then the tool's own summary
line(s), and last a ``summary: …`` line (the gate's one-line summary).

:data:`MARKERS` says, for each parser, what its command or its output must
hold for it to answer at all; a parser registered lazily
(:mod:`stepkit.lazyplugins`) is asked :func:`may_answer` before its module
is imported (``ANSWERS_ONLY_WHEN`` there names it), so condensing a gate's output imports only the parsers that
can read it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, Literal, NamedTuple, TypeVar

from stepkit.lazyregex import lazy_compile
from stepkit.records import Evidence, FirstError
from stepkit.text import strip_ansi, terminal_line
from stepkit.workspace.evidence import ERRORS_HEADING, FAILING_TESTS_LABEL, SUMMARY_PREFIX

T = TypeVar("T")

#: How many lines of a single failure's first error to keep.
ERROR_LINES = 3
#: The location line under a rustc-style diagnostic (cargo, clippy, ruff's full format).
ARROW = lazy_compile(r"^\s*--> (?P<where>\S+)")


class Markers(NamedTuple):
    """What a parser needs to see before it answers: its command names one of
    ``tools`` (:func:`mentions`), or its output holds one of ``texts`` (every
    line that makes the output the tool's holds one of them)."""

    tools: tuple[str, ...]
    texts: tuple[str, ...]


#: Each parser's :class:`Markers`, by module; a parser not named here (the
#: generic one) reads every output.
MARKERS: dict[str, Markers] = {
    "stepkit.plugins.evidence.pytest": Markers(
        ("pytest", "py.test"),
        (
            "test session starts",
            "no tests ran",
            " failed",
            " passed",
            " skipped",
            " deselected",
            " xfailed",
            " xpassed",
            " error",
            " warning",
            " rerun",
        ),
    ),
    "stepkit.plugins.evidence.unittest": Markers(("unittest",), ("Ran ",)),
    "stepkit.plugins.evidence.cargo": Markers(("cargo", "rustc"), ("test result: ", "Compiling ")),
    "stepkit.plugins.evidence.gotest": Markers(
        ("go",), ("--- FAIL: ", "ok ", "ok\t", "FAIL", "? ", "?\t")
    ),
    "stepkit.plugins.evidence.jest": Markers(
        ("jest", "vitest"), ("Tests", "Test Suites:", "Test Files")
    ),
    "stepkit.plugins.evidence.ruff": Markers(
        ("ruff",),
        (
            "Found ",
            "All checks passed!",
            "No errors found",
            "reformatted",
            "left unchanged",
            "already formatted",
            "fixable",
        ),
    ),
    "stepkit.plugins.evidence.mypy": Markers(
        ("mypy", "pyright", "dmypy"), ("Found ", "Success: no issues found", " warning")
    ),
    "stepkit.plugins.evidence.eslint": Markers(("eslint",), (" problem", "potentially fixable")),
    "stepkit.plugins.evidence.tsc": Markers(("tsc", "vue-tsc"), ("error TS",)),
    "stepkit.plugins.evidence.maven": Markers(("mvn", "mvnw", "./mvnw"), ("[INFO] BUILD ",)),
}


def may_answer(parser: str, arguments: Mapping[str, Any]) -> bool:
    """Whether the parser module ``parser`` can answer a ``stepkit_condense_output``
    call with these arguments (its ``command`` and ``output``, :data:`MARKERS`);
    False means it certainly answers None.  Output with colour codes always
    may: a code can split a marker."""
    markers = MARKERS.get(parser)
    command, output = arguments.get("command") or "", arguments.get("output") or ""
    return (
        markers is None
        or "\x1b" in output
        or _holds_any(output, markers.texts)
        or mentions(command, *markers.tools)
    )


#: Characters of output above which the markers it holds are found by one RE2
#: pass for every parser at once, not by an ``in`` per marker (about 1 ms
#: each on the 2 MB a big gate keeps: 40 of them for one gate).
_ONE_PASS_CHARS = 256 * 1024


def _holds_any(output: str, texts: tuple[str, ...]) -> bool:
    if len(output) <= _ONE_PASS_CHARS:
        return any(text in output for text in texts)
    held = _held_markers(output)
    return any(text in held for text in texts)


@functools.lru_cache(maxsize=1)
def _held_markers(output: str) -> frozenset[str]:
    """Every parser's marker texts that ``output`` holds: the parsers are
    asked of the same output in turn.  An RE2 set reports each of its
    patterns that matches anywhere, overlapping or not."""
    texts, found = _marker_texts(), _marker_set().Match(output.encode("utf-8", "surrogatepass"))
    return frozenset(texts[at] for at in found or ())


@functools.cache
def _marker_texts() -> tuple[str, ...]:
    return tuple(dict.fromkeys(text for markers in MARKERS.values() for text in markers.texts))


@functools.cache
def _marker_set() -> Any:
    """One RE2 set of every marker text, literally (google-re2 ships no types)."""
    import re2

    markers = re2.Set.SearchSet(re2.Options())
    for text in _marker_texts():
        markers.Add(re.escape(text))
    markers.Compile()
    return markers


def clean_lines(output: str) -> list[str]:
    """The output split into lines as a terminal shows them: no colour codes,
    no trailing blanks, only the last ``\\r`` rewrite of a progress line.

    Every condenser asks for the lines of the same output in turn, so the
    last answer is kept (a copy is returned: callers may change theirs)."""
    return list(_clean_lines(output))


@functools.lru_cache(maxsize=1)
def _clean_lines(output: str) -> tuple[str, ...]:
    text = strip_ansi(output) if "\x1b" in output else output
    if "\r" not in text:
        return tuple(line.rstrip() for line in text.split("\n"))
    return tuple(terminal_line(line) for line in text.split("\n"))


def mentions(command: str, *tools: str) -> bool:
    """True when the command runs one of ``tools`` (a whole word, e.g. ``pytest``
    in ``uv run pytest -q`` but not in ``pytest_cov``)."""
    return any(re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-])", command) for tool in tools)


def unique(items: Iterable[T], key: Callable[[T], Hashable] | None = None) -> list[T]:
    """Items in first-seen order, duplicates dropped; with ``key``, an item is
    a duplicate when an earlier one has the same key."""
    seen: set[Hashable] = set()
    result = []
    for item in items:
        k = item if key is None else key(item)
        if k not in seen:
            seen.add(k)
            result.append(item)
    return result


def first_nonblank(
    lines: list[str], start: int, limit: int = ERROR_LINES, stop: re.Pattern[str] | None = None
) -> list[str]:
    """Up to ``limit`` non-blank lines from ``start`` (stripped), ending early
    at a line matching ``stop``."""
    kept = []
    for line in lines[start:]:
        if stop is not None and stop.search(line):
            break
        if line.strip():
            kept.append(line.strip())
            if len(kept) >= limit:
                break
    return kept


def render(
    *,
    failing: list[str] | None = None,
    failing_label: str = FAILING_TESTS_LABEL,
    tests: dict[str, Literal["failed", "errored"]] | None = None,
    errors: list[tuple[str, list[str]]] | None = None,
    more: dict[str, list[str]] | None = None,
    tool_summary: list[str] | None = None,
    summary: str | None = None,
) -> Evidence:
    """Assemble a condenser's answer: the evidence, its text rendered from it.

    :param failing: one line per failing test or diagnostic (its id, maybe
        with its error message).
    :param failing_label: the heading of that list.
    :param tests: the failing tests' ids and statuses, when the output names
        tests (default: under the ``failing tests`` label, each item is an id
        that failed).
    :param errors: ``(heading, first error lines)`` per failure.
    :param more: further labelled lists (warnings …), after the errors.
    :param tool_summary: the tool's own summary line(s), verbatim.
    :param summary: the gate's one-line summary (``5 failed, 1995 passed``).
    """
    parts: list[str] = []
    if failing:
        parts.append(f"{failing_label} ({len(failing)}):")
        parts.extend(f"  {item}" for item in failing)
    if errors:
        parts.append(ERRORS_HEADING)
        for heading, lines in errors:
            parts.append(f"  {heading}")
            parts.extend(f"    {line}" for line in lines)
    for label, items in (more or {}).items():
        if items:
            parts.append(f"{label}:")
            parts.extend(f"  {item}" for item in items)
    parts.extend(tool_summary or [])
    if summary:
        parts.append(f"{SUMMARY_PREFIX}{summary}")
    if tests is None:
        tests = (
            dict.fromkeys(failing or [], "failed") if failing_label == FAILING_TESTS_LABEL else {}
        )
    return Evidence(
        text="\n".join(parts),
        failing=list(failing or []),
        tests=tests,
        errors=[FirstError(heading=heading, lines=list(lines)) for heading, lines in errors or []],
        summary=summary or None,
    )


def failed_silently(exit_code: int | None, found: object) -> bool:
    """A failed run in which the parser found nothing failing: it does not
    understand this output (``make check`` ran several tools and another one
    failed), so it should leave it to the next parser."""
    return exit_code not in (0, None) and not found


def plural(count: int, noun: str) -> str:
    """``1 error`` / ``2 errors``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
