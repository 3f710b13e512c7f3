"""Evidence from ruff: every diagnostic as ``path:line:col: CODE message``
(from the concise or the full output format), files ``ruff format`` would
change, parse errors, and the ``Found N errors`` / format count line."""

from __future__ import annotations

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import (
    ARROW,
    clean_lines,
    failed_silently,
    mentions,
    render,
    unique,
)
from stepkit.records import Evidence

_CONCISE = lazy_compile(r"^(?P<where>\S+?:\d+:\d+): (?P<code>[A-Z]+\d+) (?:\[\*\] )?(?P<msg>.+)$")
_FULL_HEAD = lazy_compile(
    r"^(?P<code>[A-Z]+\d+|unformatted|invalid-syntax) (?:\[\*\] )?(?P<msg>.+)$|^(?P<code2>invalid-syntax|unformatted): (?P<msg2>.+)$"
)
_WOULD = lazy_compile(r"^Would reformat: (?P<path>.+)$")
_PARSE = lazy_compile(r"^error: (?P<msg>.+)$")
_SUMMARY = lazy_compile(
    r"^(?:Found \d+ errors?.*|All checks passed!|No errors found\.?"
    r"|\d+ files? (?:would be reformatted|reformatted|left unchanged|already formatted).*"
    r"|\[\*\] \d+ fixable.*)$"
)


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense ruff output; None when it is not ruff's."""
    lines = clean_lines(output)
    tool_summary = [line for line in lines if _SUMMARY.match(line)]
    if not (mentions(command, "ruff") or tool_summary):
        return None
    diagnostics = unique(_diagnostics(lines))
    parse_errors = unique(f"error: {m['msg']}" for line in lines if (m := _PARSE.match(line)))
    if not (diagnostics or parse_errors or tool_summary):
        return None
    counts = [line for line in tool_summary if not line.startswith("[*]")]
    summary = (
        counts[-1].rstrip(".")
        if counts
        else (f"{len(diagnostics)} diagnostics" if diagnostics else None)
    )
    if failed_silently(exit_code, diagnostics or parse_errors):
        return None
    return render(
        failing=parse_errors + diagnostics,
        failing_label="diagnostics",
        tool_summary=tool_summary,
        summary=summary,
    )


def _diagnostics(lines: list[str]):
    for i, line in enumerate(lines):
        concise = _CONCISE.match(line)
        if concise:
            yield f"{concise['where']}: {concise['code']} {concise['msg']}"
            continue
        would = _WOULD.match(line)
        if would:
            yield f"{would['path']}: would be reformatted"
            continue
        head = _FULL_HEAD.match(line)
        if head and i + 1 < len(lines) and (arrow := ARROW.match(lines[i + 1])):
            code, msg = head["code"] or head["code2"], head["msg"] or head["msg2"]
            if code == "unformatted":
                yield f"{arrow['where'].split(':')[0]}: would be reformatted"
            else:
                yield f"{arrow['where']}: {code} {msg}"
