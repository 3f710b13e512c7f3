"""The fallback condenser for output no tool parser recognised: the head, the
lines that look like errors, and the tail (where most tools put their
verdict)."""

from __future__ import annotations

import re
from itertools import islice

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import clean_lines
from stepkit.records import Evidence

HEAD_LINES = 20
TAIL_LINES = 40
MATCH_LINES = 60
_ALARM = lazy_compile(r"error|fail|panic|traceback|exception|fatal|abort", re.IGNORECASE)


@hookimpl(trylast=True)
def stepkit_condense_output(output: str) -> Evidence:
    """Head + error-looking lines + tail; short output is returned whole."""
    return Evidence(text=_kept(output))


def _kept(output: str) -> str:
    lines = clean_lines(output)
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) <= HEAD_LINES + TAIL_LINES:
        return "\n".join(lines)
    middle = range(HEAD_LINES, len(lines) - TAIL_LINES)
    alarms = list(islice((i for i in middle if _ALARM.search(lines[i])), MATCH_LINES))
    kept = list(range(HEAD_LINES)) + alarms + list(range(len(lines) - TAIL_LINES, len(lines)))
    result, previous = [], -1
    for i in kept:
        if i > previous + 1:
            result.append(f"[... {i - previous - 1} lines omitted ...]")
        result.append(lines[i])
        previous = i
    return "\n".join(result)
