"""go test: each test's result read from its output (``-json`` events, or
the ``--- FAIL`` lines and, with ``-v``, every ``--- PASS``), ids
``package::TestName``; failing ids re-run per package with ``-run``; its
package lines, which also tell a run of packages without a test file."""

from __future__ import annotations

import re

from stepkit import quoting
from stepkit.lazyregex import lazy_compile
from stepkit.workspace import testresults as tr
from stepkit.workspace.jsonlines import json_object
from stepkit.workspace.loglines import lines_of
from stepkit.workspace.runners import Call, Report, Rerun, TestRunner

#: Joins a go test's package and name in its id.
SEPARATOR = "::"
_GO_TEXT = lazy_compile(r"^\s*--- (?P<word>PASS|FAIL|SKIP): (?P<name>\S+) \(")
_GO_PACKAGE = lazy_compile(r"^(?P<word>ok|FAIL)\s+(?P<pkg>\S+)")
_GO_STATUS: dict[str, tr.TestStatus] = {
    "pass": "passed",
    "fail": "failed",
    "skip": "skipped",
    "PASS": "passed",
    "FAIL": "failed",
    "SKIP": "skipped",
}


def read_json(output: tr.Output) -> tr.TestResults | None:
    """Results from ``go test -json`` lines (None: the output has none)."""
    results = tr.TestResults(source="go test -json")
    seen = False
    for line in lines_of(output):
        event = json_object(line)
        if event is None:
            continue
        action, test = event.get("Action"), event.get("Test")
        if test and action in ("pass", "fail", "skip"):
            seen = True
            results.add(f"{event.get('Package', '')}{SEPARATOR}{test}", _GO_STATUS[action])
    return results if seen else None


def read_text(output: tr.Output, verbose: bool) -> tr.TestResults | None:
    """Results from ``go test``'s text: each ``--- FAIL`` (and with ``-v`` each
    ``--- PASS``/``--- SKIP``) line, given the package named by the ``ok`` /
    ``FAIL`` line that closes its package."""
    results = tr.TestResults(source="go test output", complete=verbose)
    pending: list[tuple[str, tr.TestStatus]] = []
    for line in lines_of(output):
        test = _GO_TEXT.match(line)
        if test:
            pending.append((test["name"], _GO_STATUS[test["word"]]))
            continue
        package = _GO_PACKAGE.match(line)
        if package and pending:
            for name, status in pending:
                results.add(f"{package['pkg']}{SEPARATOR}{name}", status)
            pending = []
    for name, status in pending:  # no package line (killed): the name alone
        results.add(name, status)
    return results if results.outcomes else None


def _report(call: Call, ambient: Report) -> Report:
    words = call.arguments()
    verbose = "-v" in words
    reader = (
        (lambda o, e: read_json(o)) if "-json" in words else (lambda o, e: read_text(o, verbose))
    )
    return Report(call.command, ambient.env, reader, None, ambient.note)


def _rerun(rerun: Rerun) -> Report | None:
    by_package: dict[str, list[str]] = {}
    for test_id in rerun.failing:
        package, sep, name = test_id.rpartition(SEPARATOR)
        if not sep:
            return None
        by_package.setdefault(package, []).append(re.escape(name.split("/")[0]))
    rerun.base.command = " ; ".join(
        quoting.shell(
            ["go", "test", "-json", "-count=1", "-run", f"^({'|'.join(sorted(set(names)))})$"]
            + [package]
        )
        for package, names in by_package.items()
    )
    rerun.base.reader = lambda o, e: read_json(o)
    return rerun.base


_NO_TEST_PACKAGE = lazy_compile(
    r"^(?:\?\s+\S+\s+\[no test files\]|ok\s+\S+\s+(?:[\d.]+s|\(cached\))\s+\[no tests to run\])$"
)
_ANY_PACKAGE = lazy_compile(r"^(?:ok|FAIL|\?)\s+\S+\s+(?:[\d.]+s|\(cached\)|\[)")


def _no_test_files(lines: list[str], text: str) -> tuple[str, tuple[int, ...]] | None:
    """Every package line says the package has no test file (or ran none)."""
    packages = [line for line in lines if _ANY_PACKAGE.match(line)]
    if packages and all(_NO_TEST_PACKAGE.match(line) for line in packages):
        many = "package" if len(packages) == 1 else "packages"
        return f"go: no test files in any of {len(packages)} {many}", (0,)
    return None


RUNNERS = (
    TestRunner(
        name="go",
        command=lambda words: words[:2] == ["go", "test"],
        report=_report,
        rerun=_rerun,
        failed=(r"^\s*--- FAIL: ",),
        ran=(
            r"^ok\s+\S+\s+(?:[\d.]+s|\(cached\))(?!.*\[no tests to run\])",
            r"^\s*--- (?:PASS|FAIL): ",
        ),
        words=("ok", "--- ", "no-source"),
        no_tests_in=_no_test_files,
        skip_markers=(("t.Skip", r"\bt\.Skip(Now|f)?\("),),
    ),
)
