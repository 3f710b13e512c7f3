"""Evidence from jest and vitest: each failing test (file › describe › name)
with its first error lines, suites that failed to run, and the ``Tests:`` line."""

from __future__ import annotations

import re

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import (
    ERROR_LINES,
    clean_lines,
    failed_silently,
    first_nonblank,
    mentions,
    render,
    unique,
)
from stepkit.records import Evidence

# jest
_JEST_FILE = lazy_compile(r"^\s*FAIL\s+(?P<file>\S+)\s*(?:\(.*\))?$")
_JEST_TEST = lazy_compile(r"^\s*● (?P<name>.+)$")
_JEST_SUMMARY = lazy_compile(r"^(?:Tests|Test Suites):\s+.*\btotal$")
# vitest
_VITEST_TEST = lazy_compile(r"^\s*FAIL\s+(?P<id>\S+ > .+?)\s*$")
_VITEST_SUMMARY = lazy_compile(r"^\s*(?:Tests|Test Files)\s{2,}\S.*\(\d+\)$")
_VITEST_CROSS = lazy_compile(r"^\s*[×✗]\s+(?P<name>.+?)(?:\s+\d+m?s)?$")
_STOP = lazy_compile(r"^\s*(?:●|FAIL\s|PASS\s|⎯{3,}|at )")


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense jest or vitest output; None when it is neither."""
    lines = clean_lines(output)
    jest_summary = [line.strip() for line in lines if _JEST_SUMMARY.match(line)]
    vitest_summary = [line.strip() for line in lines if _VITEST_SUMMARY.match(line)]
    if not (mentions(command, "jest", "vitest") or jest_summary or vitest_summary):
        return None
    if vitest_summary or (mentions(command, "vitest") and not jest_summary):
        failing, errors = _vitest(lines)
        summary_lines = vitest_summary
        tests_line = next((s for s in vitest_summary if s.startswith("Tests")), None)
        summary = (
            re.sub(r"\s+", " ", tests_line.removeprefix("Tests")).strip() if tests_line else None
        )
    else:
        failing, errors = _jest(lines)
        summary_lines = jest_summary
        tests_line = next((s for s in jest_summary if s.startswith("Tests:")), None)
        summary = tests_line.removeprefix("Tests:").strip() if tests_line else None
    if not (failing or summary_lines):
        return None
    if summary is None and summary_lines:
        summary = summary_lines[0]
    if failed_silently(exit_code, failing):
        return None
    return render(failing=failing, errors=errors, tool_summary=summary_lines, summary=summary)


def _jest(lines: list[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    failing, errors = [], []
    current_file = ""
    for i, line in enumerate(lines):
        file_match = _JEST_FILE.match(line)
        if file_match:
            current_file = file_match["file"]
            continue
        test = _JEST_TEST.match(line)
        if test:
            test_id = f"{current_file} › {test['name']}" if current_file else test["name"]
            failing.append(test_id)
            errors.append((test_id, first_nonblank(lines, i + 1, ERROR_LINES, stop=_STOP)))
    return _merge(failing, errors)


def _vitest(lines: list[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    failing, errors = [], []
    for i, line in enumerate(lines):
        test = _VITEST_TEST.match(line)
        if test:
            failing.append(test["id"])
            errors.append((test["id"], first_nonblank(lines, i + 1, ERROR_LINES, stop=_STOP)))
    if not failing:  # no "Failed Tests" block: take the × marks of the run
        failing = [m["name"] for line in lines if (m := _VITEST_CROSS.match(line))]
    return _merge(failing, errors)


def _merge(
    failing: list[str], errors: list[tuple[str, list[str]]]
) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """A test reported twice (watch mode, retries) is listed once."""
    return unique(failing), unique(errors, key=lambda error: error[0])
