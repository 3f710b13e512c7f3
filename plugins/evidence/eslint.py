"""Evidence from eslint (stylish and compact formats): every error as
``file:line:col message (rule)``, a warning count, and the ``✖ N problems``
line."""

from __future__ import annotations

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import clean_lines, failed_silently, mentions, render, unique
from stepkit.records import Evidence

_FILE = lazy_compile(r"^(?P<file>(?:/|\.{0,2}/|[A-Za-z]:\\|[\w@.-]+/)\S*\.\w+)$")
_STYLISH = lazy_compile(
    r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<level>error|warning)\s+(?P<msg>.+?)(?:\s{2,}(?P<rule>\S+))?$"
)
_COMPACT = lazy_compile(
    r"^(?P<file>\S.*?): line (?P<line>\d+), col (?P<col>\d+), (?P<level>Error|Warning) - (?P<msg>.+)$"
)
_SUMMARY = lazy_compile(
    r"^[✖×]\s+\d+ problems? .*|^\d+ problems?$|^\s*\d+ errors? and \d+ warnings? potentially fixable.*"
)


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense eslint output; None when it is not eslint's."""
    lines = clean_lines(output)
    tool_summary = [line.strip() for line in lines if _SUMMARY.match(line)]
    if not (mentions(command, "eslint") or tool_summary):
        return None
    errors: list[str] = []
    warnings: list[str] = []
    current = ""
    for line in lines:
        if _FILE.match(line):
            current = line.strip()
            continue
        m = _STYLISH.match(line)
        if m and current:
            rule = f" ({m['rule']})" if m["rule"] else ""
            item = f"{current}:{m['line']}:{m['col']}: {m['msg']}{rule}"
            (errors if m["level"] == "error" else warnings).append(item)
            continue
        c = _COMPACT.match(line)
        if c:
            item = f"{c['file']}:{c['line']}:{c['col']}: {c['msg']}"
            (errors if c["level"] == "Error" else warnings).append(item)
    if not (errors or warnings or tool_summary):
        return None
    problems = next((line for line in tool_summary if "problem" in line), None)
    summary = (
        problems.lstrip("✖× ").strip()
        if problems
        else f"{len(errors)} errors, {len(warnings)} warnings"
    )
    if failed_silently(exit_code, errors):
        return None
    return render(
        failing=unique(errors),
        failing_label="errors",
        more={f"warnings ({len(warnings)})": unique(warnings)[:10]},
        tool_summary=tool_summary,
        summary=summary,
    )
