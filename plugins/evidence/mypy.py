"""Evidence from the Python type checkers: mypy (``path:line: error: …``) and
pyright (``path:line:col - error: …``); every error line and the
``Found N errors`` / ``N errors, M warnings`` summary."""

from __future__ import annotations

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import clean_lines, failed_silently, mentions, render, unique
from stepkit.records import Evidence

_MYPY = lazy_compile(r"^(?P<where>[^\s:][^:]*:\d+(?::\d+)?): error: (?P<msg>.+)$")
_PYRIGHT = lazy_compile(r"^\s*(?P<where>\S.*?:\d+:\d+) - error: (?P<msg>.+)$")
_SUMMARY = lazy_compile(
    r"^(?:Found \d+ errors? in \d+ files?.*|Success: no issues found.*"
    r"|\d+ errors?, \d+ warnings?, \d+ (?:informations?|notes?).*)$"
)


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense mypy or pyright output; None when it is neither."""
    lines = clean_lines(output)
    tool_summary = [line.strip() for line in lines if _SUMMARY.match(line.strip())]
    if not (mentions(command, "mypy", "pyright", "dmypy") or tool_summary):
        return None
    errors = unique(
        f"{m['where']}: {m['msg']}"
        for line in lines
        if (m := _MYPY.match(line) or _PYRIGHT.match(line))
    )
    if not (errors or tool_summary):
        return None
    summary = tool_summary[-1].rstrip(".") if tool_summary else f"{len(errors)} errors"
    if failed_silently(exit_code, errors):
        return None
    return render(
        failing=errors, failing_label="type errors", tool_summary=tool_summary, summary=summary
    )
