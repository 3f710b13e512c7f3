"""Evidence from ``go test`` (and ``go build`` / ``go vet``): each ``--- FAIL``
test with its first message lines, packages that failed or did not build,
compiler errors, and a pass/fail count per package."""

from __future__ import annotations

import re

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import (
    clean_lines,
    failed_silently,
    first_nonblank,
    mentions,
    plural,
    render,
    unique,
)
from stepkit.records import Evidence

_FAIL = lazy_compile(r"^\s*--- FAIL: (?P<id>\S+) \([\d.]+s\)$")
_PASS = lazy_compile(r"^\s*--- PASS: ")
_PACKAGE = lazy_compile(r"^(?P<word>ok|FAIL|\?)\s+(?P<pkg>\S+)(?:\s+(?P<rest>.*))?$")
_COMPILE = lazy_compile(r"^(?:\./|\.\./|/)?[\w./-]+\.go:\d+(?::\d+)?: .+$")
_PANIC = lazy_compile(r"^panic: .+")
# a test logs indented lines: the next test, package or unindented line ends them
_STOP = lazy_compile(r"^\s*(?:--- |=== |FAIL\b|ok\s|PASS$)|^\S")


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense go test output; None when it is not Go's."""
    lines = clean_lines(output)
    packages = [m for line in lines if (m := _PACKAGE.match(line)) and _looks_like_package(m)]
    fails = [(i, m["id"]) for i, line in enumerate(lines) if (m := _FAIL.match(line))]
    if not (mentions(command, "go") or packages or fails):
        return None
    compile_errors = unique(line for line in lines if _COMPILE.match(line))
    panic = next((line for line in lines if _PANIC.match(line)), None)
    if not (packages or fails or compile_errors or panic):
        return None

    errors = [(test_id, _messages(lines, i)) for i, test_id in fails]
    if panic:
        errors.append(("panic", [panic]))
    failed_pkgs = [m.group(0) for m in packages if m["word"] == "FAIL"]
    ok = sum(1 for m in packages if m["word"] == "ok")
    passed_tests = sum(1 for line in lines if _PASS.match(line))
    parts = [f"{len(fails)} failed"]
    if passed_tests:
        parts.append(f"{passed_tests} passed")
    summary = ", ".join(parts) + f"; packages: {ok} ok, {len(failed_pkgs)} failed"
    if compile_errors and not fails:
        summary = f"{plural(len(compile_errors), 'compile error')}; packages: {ok} ok, {len(failed_pkgs)} failed"
    if failed_silently(exit_code, fails or compile_errors or panic or failed_pkgs):
        return None
    return render(
        failing=unique(test_id for _, test_id in fails) or compile_errors,
        failing_label="failing tests" if fails else "compile errors",
        errors=errors,
        more={"compile errors": compile_errors if fails else []},
        tool_summary=failed_pkgs,
        summary=summary,
    )


def _looks_like_package(m: re.Match[str]) -> bool:
    """``ok  example.com/pkg 0.1s`` / ``FAIL example.com/pkg [build failed]`` /
    ``?   example.com/pkg [no test files]`` — not prose starting with "ok"."""
    rest = m["rest"] or ""
    return bool(re.match(r"^(?:[\d.]+s|\(cached\)|\[)", rest)) or (
        m["word"] == "FAIL" and not rest and "/" in m["pkg"]
    )


def _messages(lines: list[str], at: int) -> list[str]:
    """The indented lines a failing test logged: right under ``--- FAIL``, or
    (``go test -v`` streams them) under its ``=== RUN`` line."""
    kept = first_nonblank(lines, at + 1, stop=_STOP)
    if not kept:
        failed = _FAIL.match(lines[at])
        assert failed is not None  # at is a --- FAIL line
        test_id = failed["id"]
        run = next(
            (i for i in range(at - 1, -1, -1) if lines[i].strip() == f"=== RUN   {test_id}"), None
        )
        if run is not None:
            kept = first_nonblank(lines, run + 1, stop=_STOP)
    return kept
