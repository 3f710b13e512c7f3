"""Evidence from cargo: failing tests of ``cargo test`` with their panic
message, compiler and clippy diagnostics (``error[E…]`` with location), and
the ``test result:`` / ``could not compile`` lines."""

from __future__ import annotations

import re

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import (
    ARROW,
    clean_lines,
    failed_silently,
    mentions,
    plural,
    render,
    unique,
)
from stepkit.records import Evidence

_TEST = lazy_compile(r"^test (?P<id>.+?) \.\.\. (?P<status>FAILED|ok|ignored)\b")
_RESULT = lazy_compile(
    r"^test result: (?P<word>ok|FAILED)\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; (?P<ignored>\d+) ignored"
)
_STDOUT = lazy_compile(r"^---- (?P<id>.+?) std(?:out|err) ----$")
_PANIC = lazy_compile(r"^thread '.*' (?:\(\d+\) )?panicked at (?P<where>.*?):?$")
_DIAG = lazy_compile(r"^(?P<level>error|warning)(?:\[(?P<code>[\w]+)\])?: (?P<msg>.+)$")
_FINAL = lazy_compile(
    r"^error: (could not compile|test failed|\d+ targets? failed)|^warning: .* generated \d+ warnings?"
)
_MORE_WARNINGS = 10


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense cargo output; None when it is not cargo's."""
    lines = clean_lines(output)
    results = [m for line in lines if (m := _RESULT.match(line))]
    if not (
        mentions(command, "cargo", "rustc")
        or results
        or any(re.match(r"^\s+Compiling \S+ v\d", line) for line in lines)
    ):
        return None
    failing = unique(
        m["id"] for line in lines if (m := _TEST.match(line)) and m["status"] == "FAILED"
    )
    panics = _panics(lines)
    errors, warnings = _diagnostics(lines)
    finals = unique(line for line in lines if _FINAL.match(line))
    if not (failing or errors or warnings or results or finals):
        return None

    def located(msg: str, where: str) -> str:
        return f"{msg}  ({where})" if where else msg

    if failing:
        details = [(test_id, panics.get(test_id, [])) for test_id in failing]
        details += [(located(msg, where), []) for msg, where in errors]
    else:
        details = []
    shown_warnings = [located(msg, where) for msg, where in warnings[:_MORE_WARNINGS]]
    if len(warnings) > _MORE_WARNINGS:
        shown_warnings.append(f"(+{len(warnings) - _MORE_WARNINGS} more)")
    if failed_silently(exit_code, failing or errors):
        return None
    return render(
        failing=failing or [located(msg, where) for msg, where in errors],
        failing_label="failing tests" if failing else "errors",
        errors=details,
        more={f"warnings ({len(warnings)})": shown_warnings},
        tool_summary=unique(m.string for m in results) + finals,
        summary=_summary(results, errors, warnings, finals),
    )


def _panics(lines: list[str]) -> dict[str, list[str]]:
    """Test id → its panic location and message (from ``---- id stdout ----``)."""
    found: dict[str, list[str]] = {}
    current = None
    for i, line in enumerate(lines):
        section = _STDOUT.match(line)
        if section:
            current = section["id"]
            continue
        panic = _PANIC.match(line)
        if current and panic and current not in found:
            message = []
            for follow in lines[i + 1 : i + 4]:
                if not follow.strip() or follow.startswith(("stack backtrace:", "note: ")):
                    break
                message.append(follow.strip())
            found[current] = [f"panicked at {panic['where']}"] + message
    return found


def _diagnostics(lines: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(message, location) for each compiler error and warning."""
    errors: list[tuple[str, str]] = []
    warnings: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        m = _DIAG.match(line)
        if not m or _FINAL.match(line) or line.startswith("error: test failed"):
            continue
        where = next(
            (a["where"] for follow in lines[i + 1 : i + 4] if (a := ARROW.match(follow))), ""
        )
        code = f"[{m['code']}]" if m["code"] else ""
        entry = (f"{m['level']}{code}: {m['msg']}", where)
        (errors if m["level"] == "error" else warnings).append(entry)
    return unique(errors), unique(warnings)  # several targets repeat a diagnostic


def _summary(results, errors, warnings, finals) -> str:
    if results:
        passed = sum(int(m["passed"]) for m in results)
        failed = sum(int(m["failed"]) for m in results)
        ignored = sum(int(m["ignored"]) for m in results)
        text = f"{failed} failed, {passed} passed" + (f", {ignored} ignored" if ignored else "")
        return text + (f"; {plural(len(errors), 'compile error')}" if errors else "")
    compile_fail = next((line for line in finals if "could not compile" in line), None)
    if compile_fail:
        return compile_fail.removeprefix("error: ")
    if errors:
        return f"{plural(len(errors), 'error')}, {plural(len(warnings), 'warning')}"
    return plural(len(warnings), "warning") if warnings else "no errors"
