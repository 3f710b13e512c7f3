"""mix test (ExUnit): the failures its formatter lists (``  1) test adds
(CalcTest)`` over ``     test/calc_test.exs:4``), ids ``file › Module ›
test name``; failing ids re-run by name (``--only test:NAME``) in their
files; its closing ``N tests, M failures`` line and ``@tag :skip``.

ExUnit writes no report without a dependency, and names no passing test
without ``--trace`` (which changes how the suite runs): the results list
the failures only."""

from __future__ import annotations

from stepkit.lazyregex import lazy_compile
from stepkit.text import strip_ansi
from stepkit.workspace import testresults as tr
from stepkit.workspace.loglines import lines_of
from stepkit.workspace.runners import Call, NoTests, Report, Rerun, TestRunner

#: Joins a test's file, module and name in its id.
SEPARATOR = " › "
_FAILURE = lazy_compile(r"^\s+\d+\) (?P<name>(?:test|doctest|property) .+) \((?P<module>[\w.]+)\)$")
_LOCATION = lazy_compile(r"^\s+(?P<file>\S+\.exs?):\d+$")


def read_failures(output: tr.Output) -> tr.TestResults | None:
    """The failing tests ExUnit's formatter lists (None: it lists none)."""
    results = tr.TestResults(source="mix test output", complete=False)
    failure = None
    for raw in lines_of(output):
        line = strip_ansi(raw).rstrip()
        if failure is not None and (at := _LOCATION.match(line)):
            results.add(SEPARATOR.join([at["file"], failure["module"], failure["name"]]), "failed")
            failure = None
        else:
            failure = _FAILURE.match(line)
    return results if results.outcomes else None


def _report(call: Call, ambient: Report) -> Report:
    return Report(call.command, ambient.env, lambda o, e: read_failures(o), None, ambient.note)


def _rerun(rerun: Rerun) -> Report | None:
    """The failing tests by name (``--only test:NAME``: a test's ``test``
    tag is its name), in their files only."""
    files, names = [], []
    for test_id in rerun.failing:
        parts = test_id.split(SEPARATOR)
        if len(parts) != 3:
            return None
        files.append(parts[0])
        names.append(parts[2])
    only = [word for name in dict.fromkeys(names) for word in ("--only", f"test:{name}")]
    rerun.base.command = rerun.call.append([*dict.fromkeys(files), *only])
    return rerun.base


RUNNERS = (
    TestRunner(
        name="mix",
        command=lambda words: words[:2] == ["mix", "test"],
        report=_report,
        rerun=_rerun,
        failed=(r"^\d+ tests?, [1-9]\d* failures?",),
        ran=(r"^[1-9]\d* tests?, \d+ failures?",),
        words=("tests", "failure", "no test", "0 test"),
        no_tests=(
            NoTests(
                r"^There are no tests to run$|^0 tests, 0 failures",
                (0, 1),
                "there are no tests to run",
            ),
        ),
        skip_markers=(("ExUnit @tag :skip", r"@(?:module)?tag\s+(?::skip\b|skip:)"),),
    ),
)
