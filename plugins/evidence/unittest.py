"""Evidence from unittest (and runners with its report format, such as
Django's): each ``FAIL:`` / ``ERROR:`` test with its exception line, and the
``Ran N tests`` / ``FAILED (failures=…)`` summary."""

from __future__ import annotations

from typing import Literal

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import clean_lines, failed_silently, mentions, render, unique
from stepkit.records import Evidence

_RAN = lazy_compile(r"^Ran (?P<n>\d+) tests? in [\d.]+s$")
_RESULT = lazy_compile(r"^(?P<text>OK|FAILED)(?: \((?P<detail>[^)]*)\))?$")
_HEADER = lazy_compile(r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<id>.+)$")
_RULE = lazy_compile(r"^(?:={20,}|-{20,})$")
_FRAME = lazy_compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense a unittest report; None when the output is not one."""
    lines = clean_lines(output)
    ran_at = next((i for i in range(len(lines) - 1, -1, -1) if _RAN.match(lines[i])), None)
    if ran_at is None and not mentions(command, "unittest"):
        return None
    blocks = _failure_blocks(lines)
    if ran_at is None and not blocks:
        return None
    failing = unique(f"{kind} {test_id}" for kind, test_id, _ in blocks)
    errors = [(f"{kind} {test_id}", detail) for kind, test_id, detail in blocks]
    tool_summary, summary = [], None
    if ran_at is not None:
        ran = lines[ran_at]
        result = next(
            (m for line in lines[ran_at + 1 :] if (m := _RESULT.match(line.strip()))), None
        )
        tool_summary = [ran] + ([result.group(0)] if result else [])
        counted = _RAN.match(ran)
        assert counted is not None  # ran is the line _RAN matched
        count = counted["n"]
        if result is None:
            summary = f"ran {count} tests, no result line"
        elif result["text"] == "OK":
            detail = f" ({result['detail']})" if result["detail"] else ""
            summary = f"OK: {count} tests{detail}"
        else:
            detail = f" ({result['detail']})" if result["detail"] else ""
            summary = f"FAILED{detail}: {count} tests"
    if failed_silently(exit_code, blocks):
        return None
    tests: dict[str, Literal["failed", "errored"]] = {}
    for kind, test_id, _ in blocks:
        if kind == "ERROR" or test_id not in tests:
            tests[test_id] = "errored" if kind == "ERROR" else "failed"
    return render(
        failing=failing, tests=tests, errors=errors, tool_summary=tool_summary, summary=summary
    )


def _failure_blocks(lines: list[str]) -> list[tuple[str, str, list[str]]]:
    """(kind, test id, [last frame, exception line]) per reported failure."""
    blocks = []
    i = 0
    while i < len(lines):
        m = _HEADER.match(lines[i])
        if m is None or i == 0 or not _RULE.match(lines[i - 1]):
            i += 1
            continue
        body_end = i + 1
        while body_end < len(lines) and not (
            _RULE.match(lines[body_end]) and body_end > i + 1 or _RAN.match(lines[body_end])
        ):
            body_end += 1
        body = [line for line in lines[i + 2 : body_end] if line.strip()]
        frame_at = [k for k, line in enumerate(body) if _FRAME.match(line)]
        after = body[frame_at[-1] + 1 :] if frame_at else body
        # the exception line is the first unindented line after the last frame
        exception = next((line for line in after if not line[:1].isspace()), None)
        detail = ([body[frame_at[-1]].strip()] if frame_at else []) + (
            [exception] if exception else []
        )
        blocks.append((m["kind"], m["id"].strip(), detail))
        i = body_end
    return blocks
