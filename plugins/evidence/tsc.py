"""Evidence from the TypeScript compiler: every ``error TSnnnn`` with its
location (plain ``file(l,c):`` or pretty ``file:l:c -`` format) and the
``Found N errors`` line."""

from __future__ import annotations

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import clean_lines, failed_silently, mentions, render, unique
from stepkit.records import Evidence

_PLAIN = lazy_compile(
    r"^(?P<file>\S.*?)\((?P<line>\d+),(?P<col>\d+)\): error (?P<code>TS\d+): (?P<msg>.+)$"
)
_PRETTY = lazy_compile(
    r"^(?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+) - error (?P<code>TS\d+): (?P<msg>.+)$"
)
_GLOBAL = lazy_compile(r"^error (?P<code>TS\d+): (?P<msg>.+)$")
_SUMMARY = lazy_compile(r"^Found \d+ errors?\b.*$")


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense tsc output; None when it is not the TypeScript compiler's."""
    lines = clean_lines(output)
    errors = []
    for line in lines:
        m = _PLAIN.match(line) or _PRETTY.match(line)
        if m:
            errors.append(f"{m['file']}:{m['line']}:{m['col']}: {m['code']} {m['msg']}")
        elif g := _GLOBAL.match(line):
            errors.append(f"{g['code']} {g['msg']}")
    tool_summary = [line for line in lines if _SUMMARY.match(line)]
    if not (errors or (mentions(command, "tsc", "vue-tsc") and tool_summary)):
        return None
    summary = tool_summary[-1].rstrip(".") if tool_summary else f"{len(errors)} errors"
    if failed_silently(exit_code, errors):
        return None
    return render(
        failing=unique(errors),
        failing_label="type errors",
        tool_summary=tool_summary,
        summary=summary,
    )
