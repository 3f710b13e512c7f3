"""cargo test: libtest's line per test read from its output (``test NAME
... ok``; under ``-q`` only the failures), ids the test paths; failing ids
re-run with ``--exact``; its ``running N tests`` and ``test result:`` lines.
nextest (:mod:`.nextest`) is recognised before it."""

from __future__ import annotations

from stepkit.lazyregex import lazy_compile
from stepkit.workspace import testresults as tr
from stepkit.workspace.loglines import lines_of
from stepkit.workspace.runners import Call, Report, Rerun, TestRunner

_LIBTEST = lazy_compile(r"^test (?P<id>.+?) \.\.\. (?P<status>ok|FAILED|ignored)\b")
_LIBTEST_STATUS: dict[str, tr.TestStatus] = {
    "ok": "passed",
    "FAILED": "failed",
    "ignored": "skipped",
}


_TERSE_FAILED = lazy_compile(r"^(?P<id>\S.*?) --- FAILED$")
_FAILURES_LIST = lazy_compile(r"^    (?P<id>\S.*)$")


def read_libtest(output: tr.Output) -> tr.TestResults | None:
    """Results from the ``test NAME ... ok`` lines libtest prints for every
    test; under ``-q`` (terse: a dot per pass) only the failed ones, from
    their ``NAME --- FAILED`` lines and the closing ``failures:`` list."""
    results = tr.TestResults(source="cargo test output")
    listing = False
    for raw in lines_of(output):
        line = raw.rstrip()
        m = _LIBTEST.match(line) or _TERSE_FAILED.match(line)
        if m:
            results.add(
                m["id"], _LIBTEST_STATUS[m["status"]] if "status" in m.groupdict() else "failed"
            )
            if "status" not in m.groupdict():
                results.complete = False
        elif line == "failures:":
            listing = True
        elif listing and (f := _FAILURES_LIST.match(line)) and not line.strip().startswith("----"):
            results.add(f["id"], "failed")
        elif listing and line and not line.startswith(" "):
            listing = False
    return results if results.outcomes else None


def is_cargo_test(words: list[str]) -> bool:
    """The words start ``cargo test`` (or ``cargo t``, ``cargo nextest``)."""
    return words[0] == "cargo" and words[1:2] in (["test"], ["nextest"], ["t"])


def _report(call: Call, ambient: Report) -> Report:
    return Report(call.command, ambient.env, lambda o, e: read_libtest(o), None, ambient.note)


def _rerun(rerun: Rerun) -> Report | None:
    if any(" " in i for i in rerun.failing):
        return None
    # pretty: one line per test even under -q, so a pass on the re-run is seen
    exact = ["--exact", "--format=pretty", *rerun.failing]
    words = rerun.call.arguments()
    rerun.base.command = rerun.call.append(exact if "--" in words else ["--", *exact])
    return rerun.base


_RUNNING = lazy_compile(r"^running (\d+) tests?$")


def _running_none(lines: list[str], text: str) -> tuple[str, tuple[int, ...]] | None:
    """Every test target ran 0 tests."""
    if "running " not in text:
        return None
    counts = [int(m.group(1)) for line in lines if (m := _RUNNING.match(line.strip()))]
    if counts and not any(counts):
        many = "test target" if len(counts) == 1 else "test targets"
        return f"cargo: running 0 tests in each of {len(counts)} {many}", (0,)
    return None


RUNNERS = (
    TestRunner(
        name="cargo",
        command=is_cargo_test,
        report=_report,
        rerun=_rerun,
        failed=(r"^test result: FAILED\.",),
        ran=(r"^running [1-9]\d* tests?$",),
        words=("running",),
        no_tests_in=_running_none,
        skip_markers=(("#[ignore]", r"#\[ignore\b"),),
    ),
)
