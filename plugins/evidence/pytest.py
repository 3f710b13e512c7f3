"""Evidence from pytest: failing test ids, the first ``E`` lines of each
failure, and the final ``N failed, M passed`` line.

The ids come from the short test summary (``-rfE``), else from ``-v``
progress lines, else (a project's options hide both) from the FAILURES /
ERRORS section headers, with the file of each section's first traceback
location: ``FAILED tests/test_a.py::TestA::test_m``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import (
    ERROR_LINES,
    clean_lines,
    failed_silently,
    mentions,
    render,
    unique,
)
from stepkit.records import Evidence

_OUTCOME = r"(?:failed|passed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun)"
_COUNTS = rf"\d+ {_OUTCOME}(?:, \d+ {_OUTCOME})*"
# "=== 5 failed, 1995 passed in 12.3s ===" (also bare, as -q prints it)
_SUMMARY = lazy_compile(rf"^=*\s*(?P<counts>{_COUNTS}|no tests ran)(?: in [\d.]+s\b.*?)?\s*=*$")
_INTERRUPTED = lazy_compile(r"^!*\s*(?P<text>Interrupted: .*?)\s*!*$")
_SHORT = lazy_compile(r"^(?P<kind>FAILED|ERROR) (?P<rest>\S.*)$")
_VERBOSE = lazy_compile(
    r"^(?:\[gw\d+\] \[\s*\d+%\] (?P<kind1>FAILED|ERROR) (?P<id1>\S.*)"
    r"|(?P<id2>\S+::\S.*?) (?P<kind2>FAILED|ERROR)(?:\s+\[\s*\d+%\])?)$"
)
_BANNER = lazy_compile(r"^={3,} ?(?P<title>.*?) ?={3,}$")
_SECTION = lazy_compile(r"^_{3,} (?P<name>.+?) _{3,}$")
_ERROR_LINE = lazy_compile(r"^\s*E\s{2,}\S|^E\s+\S")
_LOCATION = lazy_compile(r"^(?P<where>[^\s:]+:\d+): (?P<what>\w[\w.]*)$")
# the first location of a section's traceback is the test's own file: "tests/test_a.py:5:"
# (long), "tests/test_a.py:5: in test_m" (short), "tests/test_a.py:8: AssertionError"
_TEST_FILE = lazy_compile(r"^(?P<file>[^\s:]+\.py):\d+:")
_SETUP = lazy_compile(r"^ERROR at (?:setup|teardown) of (?P<name>.+)$")


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense pytest output; None when it is not pytest's."""
    lines = clean_lines(output)
    summary_line = next((line for line in reversed(lines) if _SUMMARY.match(line)), None)
    if not (
        mentions(command, "pytest", "py.test") or summary_line or "test session starts" in output
    ):
        return None
    sections = _sections(lines)
    failing = _failing(lines) or _failing_from_sections(sections)
    errors = [
        (f"{name}{f'  ({where})' if where else ''}", e_lines[:ERROR_LINES])
        for _kind, name, _file, where, e_lines in sections
    ]
    interrupted = next((m for line in lines if (m := _INTERRUPTED.match(line))), None)
    if summary_line is None and not failing and not errors and interrupted is None:
        return None  # pytest never got as far as testing: the generic view is better
    tool_summary = [summary_line] if summary_line else []
    matched = _SUMMARY.match(summary_line) if summary_line else None
    summary = matched["counts"] if matched else None
    if interrupted is not None:
        tool_summary.insert(0, interrupted["text"])
        summary = f"{summary}; {interrupted['text']}" if summary else interrupted["text"]
    if failed_silently(exit_code, failing or errors or interrupted):
        return None
    return render(
        failing=failing,
        tests=_tests(failing),
        errors=errors,
        tool_summary=tool_summary,
        summary=summary,
    )


def _tests(failing: list[str]) -> dict[str, Literal["failed", "errored"]]:
    """The test ids of the ``FAILED id - message`` / ``ERROR id`` items, by status."""
    tests: dict[str, Literal["failed", "errored"]] = {}
    for item in failing:
        kind, _, rest = item.partition(" ")
        test_id = rest.split(" - ", 1)[0]
        if kind == "ERROR" or test_id not in tests:
            tests[test_id] = "errored" if kind == "ERROR" else "failed"
    return tests


def _failing(lines: list[str]) -> list[str]:
    """Failing ids with their message, from the short test summary; from the
    verbose progress lines when there is no short summary."""
    short = []
    for line in lines:
        m = _SHORT.match(line)
        if m:
            short.append(f"{m['kind']} {m['rest']}")
    if short:
        return unique(short)
    verbose = []
    for line in lines:
        m = _VERBOSE.match(line)
        if m:
            verbose.append(f"{m['kind1'] or m['kind2']} {m['id1'] or m['id2']}")
    return unique(verbose)


def _failing_from_sections(sections: list[tuple[str, str, str, str, list[str]]]) -> list[str]:
    """``FAILED file::Class::test`` per section (the file from its first
    traceback location), for output without a short summary or ``-v`` lines."""
    result = []
    for kind, name, file, _where, _e_lines in sections:
        setup = _SETUP.match(name)
        test = setup["name"] if setup else name
        head, bracket, params = test.partition("[")  # a parameter may hold dots
        node = head.replace(".", "::") + bracket + params
        result.append(
            f"{'ERROR' if kind == 'ERRORS' else 'FAILED'} {f'{file}::' if file else ''}{node}"
        )
    return unique(result)


def _sections(lines: list[str]) -> list[tuple[str, str, str, str, list[str]]]:
    """Per section of the FAILURES / ERRORS blocks: (block, name, the test's
    file, the crash location, its ``E`` lines)."""
    result: list[tuple[str, str, str, str, list[str]]] = []
    block = ""
    name: str | None = None
    e_lines: list[str] = []
    where = file = ""

    def close() -> None:
        if name is not None:
            result.append((block, name, file, where, e_lines))

    for line in lines:
        banner = _BANNER.match(line)
        if banner:
            close()
            name, e_lines, where, file = None, [], "", ""
            block = banner["title"] if banner["title"] in ("FAILURES", "ERRORS") else ""
            continue
        if not block:
            continue
        section = _SECTION.match(line)
        if section:
            close()
            name, e_lines, where, file = section["name"], [], "", ""
        elif name is not None:
            if _ERROR_LINE.match(line):
                e_lines.append(line.strip())
                continue
            if not file and (first := _TEST_FILE.match(line)):
                file = first["file"]
            if (loc := _LOCATION.match(line)) and Path(loc["where"].split(":")[0]).suffix == ".py":
                where = f"{loc['where']}: {loc['what']}"
    close()
    return result
