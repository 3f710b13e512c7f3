"""Per-test results of a tests gate: which test ids passed, failed, errored or
were skipped, read from the runner's machine-readable report.

The readers here know the formats: JUnit XML (pytest ``--junitxml``,
``ctest --output-junit``, surefire/gradle reports, nextest), jest/vitest
JSON, dotnet's trx, ``go test -json`` lines, the text that ``go test``
and cargo's libtest print for every test, and node's test runner (TAP, or
the spec reporter's list of failures).  Which report a command is asked
for, and how, is :mod:`stepkit.workspace.testrunners`' job.

An id is stable across runs of the same tests: a pytest node id
(``tests/test_calc.py::test_add[1-2]``), ``file › describe › name`` for
jest/vitest and node's test runner, ``package::TestName`` for go, the test path for cargo,
``Class#method`` for JVM runners, the test's name for ctest and dotnet.

:class:`TestResults` is the full list; :meth:`TestResults.record` writes it
to a file beside the gate's log and returns the compact :class:`TestsRecord`
(counts plus the failing ids) that the gate result keeps, so checkpoints
stay small however large the suite.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import Field

from stepkit.jsontext import model_json
from stepkit.lazyregex import lazy_compile
from stepkit.models import Model
from stepkit.records import TestsRecord
from stepkit.workspace.jsonlines import json_object
from stepkit.workspace.loglines import lines_of

#: A run's output: its text, or its lines as a stream (:class:`~stepkit.workspace.loglines.LogLines`).
Output = str | Iterable[str]

TestStatus = Literal["passed", "failed", "errored", "skipped"]
STATUSES: tuple[TestStatus, ...] = ("passed", "failed", "errored", "skipped")
#: Failing ids a compact record keeps (the rest are in its file).
RECORD_IDS = 100

__all__ = ["STATUSES", "TestResults", "TestStatus", "TestsRecord"]


class TestResults(Model):
    """Every test id a run reported, with its status (first report wins when
    an id appears twice, except that a failure is never overwritten)."""

    __test__ = False

    source: str
    complete: bool = True
    outcomes: dict[str, TestStatus] = Field(default_factory=dict)

    def add(self, test_id: str, status: TestStatus) -> None:
        """Record one test; a failing status is never downgraded by a later pass."""
        test_id = " ".join(test_id.split())
        if not test_id:
            return
        known = self.outcomes.get(test_id)
        if known is None or (
            status in ("failed", "errored") and known not in ("failed", "errored")
        ):
            self.outcomes[test_id] = status

    def ids(self, *statuses: TestStatus) -> list[str]:
        """The ids with one of ``statuses``, in report order."""
        return [i for i, s in self.outcomes.items() if s in statuses]

    @property
    def failing(self) -> list[str]:
        """Failed and errored ids."""
        return self.ids("failed", "errored")

    def counts(self) -> dict[str, int]:
        """Tests per status (every status present, zeros included)."""
        counted = Counter(self.outcomes.values())
        return {status: counted.get(status, 0) for status in STATUSES}

    def counts_line(self) -> str:
        """``4 failed, 2 passed, 1 skipped``: the statuses that occur, failures first."""
        counts = self.counts()
        return ", ".join(
            f"{counts[s]} {s}" for s in ("failed", "errored", "passed", "skipped") if counts[s]
        )

    def failing_lines(self, limit: int = 30) -> list[str]:
        """The failing ids as the condensed evidence lists them (``failing
        tests (N):`` and up to ``limit`` ids), then ``summary:`` and the counts."""
        failing = self.failing
        lines = [f"failing tests ({len(failing)}):", *(f"  {i}" for i in failing[:limit])]
        if len(failing) > limit:
            lines.append(
                f"  … and {len(failing) - limit} more (every id is in the gate's tests.json)"
            )
        return [*lines, f"summary: {self.counts_line()}"]

    def record(self, path: Path) -> TestsRecord:
        """Write every id to ``path`` (JSON) and return the compact record."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(model_json(self, indent=1), encoding="utf-8")
        return TestsRecord(
            source=self.source,
            complete=self.complete,
            counts=self.counts(),
            failing=self.failing[:RECORD_IDS],
            file=str(path),
        )


# -- JUnit XML ---------------------------------------------------------------


def read_junit(paths: list[Path], project_dir: Path, flavour: str = "junit") -> TestResults | None:
    """Results from JUnit XML files (None: none could be read).

    :param flavour: ``pytest`` (ids become node ids), ``jvm`` (``Class#method``),
        ``name`` (the test's name alone: ctest, nextest), ``junit``
        (``classname.name``).
    """
    roots = _xml_roots(paths)
    if not roots:
        return None
    results = TestResults(source="junit XML")
    for root in roots:
        for case in root.iter("testcase"):
            results.add(_junit_id(case, project_dir, flavour), _junit_status(case))
    return results


def _xml_roots(paths: list[Path]) -> list[ET.Element]:
    """The root elements of the files that parse as XML (the others are skipped)."""
    roots = []
    for path in paths:
        try:
            roots.append(ET.parse(path).getroot())
        except (OSError, ET.ParseError):
            continue
    return roots


def _junit_status(case: ET.Element) -> TestStatus:
    tags = {child.tag for child in case}
    if "error" in tags:
        return "errored"
    if "failure" in tags:
        return "failed"
    if "skipped" in tags or case.get("status") in ("notrun", "disabled"):
        return "skipped"
    return "passed"


def _junit_id(case: ET.Element, project_dir: Path, flavour: str) -> str:
    name = case.get("name", "")
    classname = case.get("classname", "")
    if flavour == "name" or not classname:
        return name
    if flavour == "jvm":
        return f"{classname}#{name}"
    if flavour == "pytest":
        return _pytest_node_id(classname, name, case.get("file"), project_dir)
    return f"{classname}.{name}"


def _pytest_node_id(classname: str, name: str, file: str | None, project_dir: Path) -> str:
    """pytest's node id from its junit ``classname`` (``tests.test_x.TestC``):
    the longest dotted prefix that is a ``.py`` file of the project is the
    module, the rest are classes."""
    parts = classname.split(".")
    if file and file.endswith(".py"):
        module = file.replace("\\", "/")
        depth = len(Path(module).with_suffix("").parts)
        return "::".join([module, *parts[depth:], name])
    for cut in range(len(parts), 0, -1):
        module = "/".join(parts[:cut]) + ".py"
        if (project_dir / module).is_file():
            return "::".join([module, *parts[cut:], name])
    return "::".join([*parts, name]) if name else classname


# -- jest / vitest JSON ------------------------------------------------------

_JEST_STATUS: dict[str, TestStatus] = {
    "passed": "passed",
    "failed": "failed",
    "pending": "skipped",
    "skipped": "skipped",
    "todo": "skipped",
    "disabled": "skipped",
    "focused": "passed",
}
#: Joins the parts of a jest/vitest id (as jest prints ``describe › test``).
JEST_SEPARATOR = " › "


def read_jest_json(path: Path, project_dir: Path) -> TestResults | None:
    """Results from a jest or vitest ``--json``/``--reporter=json`` report."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    results = TestResults(source="jest JSON")
    for suite in data.get("testResults") or []:
        file = _relative(str(suite.get("name") or suite.get("testFilePath") or ""), project_dir)
        assertions = suite.get("assertionResults") or suite.get("testResults") or []
        for test in assertions:
            parts = [file, *(test.get("ancestorTitles") or []), str(test.get("title") or "")]
            status = _JEST_STATUS.get(str(test.get("status")), "errored")
            results.add(JEST_SEPARATOR.join(p for p in parts if p), status)
        if suite.get("status") == "failed" and not assertions:
            results.add(file, "errored")  # the file failed to run (syntax error, import)
    return results


def jest_parts(test_id: str) -> tuple[str, str]:
    """(file, full name as ``-t`` matches it) of a jest/vitest id."""
    file, _, rest = test_id.partition(JEST_SEPARATOR)
    return file, " ".join(rest.split(JEST_SEPARATOR))


def _relative(path: str, project_dir: Path) -> str:
    try:
        return Path(path).resolve().relative_to(project_dir.resolve()).as_posix()
    except (ValueError, OSError):
        return path


# -- dotnet trx --------------------------------------------------------------

_TRX_STATUS: dict[str, TestStatus] = {
    "Passed": "passed",
    "Failed": "failed",
    "NotExecuted": "skipped",
    "Inconclusive": "skipped",
    "Error": "errored",
    "Timeout": "errored",
}


def read_trx(paths: list[Path]) -> TestResults | None:
    """Results from dotnet ``.trx`` files (the test's name as its id)."""
    roots = _xml_roots(paths)
    if not roots:
        return None
    results = TestResults(source="trx")
    for root in roots:
        for result in root.iter():
            if result.tag.rsplit("}", 1)[-1] == "UnitTestResult":
                results.add(
                    result.get("testName", ""),
                    _TRX_STATUS.get(result.get("outcome", ""), "errored"),
                )
    return results


# -- go ----------------------------------------------------------------------

#: Joins a go test's package and name in its id.
GO_SEPARATOR = "::"
_GO_TEXT = lazy_compile(r"^\s*--- (?P<word>PASS|FAIL|SKIP): (?P<name>\S+) \(")
_GO_PACKAGE = lazy_compile(r"^(?P<word>ok|FAIL)\s+(?P<pkg>\S+)")
_GO_STATUS: dict[str, TestStatus] = {
    "pass": "passed",
    "fail": "failed",
    "skip": "skipped",
    "PASS": "passed",
    "FAIL": "failed",
    "SKIP": "skipped",
}


def read_go_json(output: Output) -> TestResults | None:
    """Results from ``go test -json`` lines (None: the output has none)."""
    results = TestResults(source="go test -json")
    seen = False
    for line in lines_of(output):
        event = json_object(line)
        if event is None:
            continue
        action, test = event.get("Action"), event.get("Test")
        if test and action in ("pass", "fail", "skip"):
            seen = True
            results.add(f"{event.get('Package', '')}{GO_SEPARATOR}{test}", _GO_STATUS[action])
    return results if seen else None


def read_go_text(output: Output, verbose: bool) -> TestResults | None:
    """Results from ``go test``'s text: each ``--- FAIL`` (and with ``-v`` each
    ``--- PASS``/``--- SKIP``) line, given the package named by the ``ok`` /
    ``FAIL`` line that closes its package."""
    results = TestResults(source="go test output", complete=verbose)
    pending: list[tuple[str, TestStatus]] = []
    for line in lines_of(output):
        test = _GO_TEXT.match(line)
        if test:
            pending.append((test["name"], _GO_STATUS[test["word"]]))
            continue
        package = _GO_PACKAGE.match(line)
        if package and pending:
            for name, status in pending:
                results.add(f"{package['pkg']}{GO_SEPARATOR}{name}", status)
            pending = []
    for name, status in pending:  # no package line (killed): the name alone
        results.add(name, status)
    return results if results.outcomes else None


# -- cargo (libtest) ---------------------------------------------------------

_LIBTEST = lazy_compile(r"^test (?P<id>.+?) \.\.\. (?P<status>ok|FAILED|ignored)\b")
_LIBTEST_STATUS: dict[str, TestStatus] = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}


_TERSE_FAILED = lazy_compile(r"^(?P<id>\S.*?) --- FAILED$")
_FAILURES_LIST = lazy_compile(r"^    (?P<id>\S.*)$")


def read_libtest(output: Output) -> TestResults | None:
    """Results from the ``test NAME ... ok`` lines libtest prints for every
    test; under ``-q`` (terse: a dot per pass) only the failed ones, from
    their ``NAME --- FAILED`` lines and the closing ``failures:`` list."""
    results = TestResults(source="cargo test output")
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


# -- the condensed evidence --------------------------------------------------

_FAILING_HEADING = lazy_compile(r"^failing tests \(\d+\):$")
_KIND = lazy_compile(r"^(?:FAILED|ERROR)\s+")
_MESSAGE = lazy_compile(r" - .*$")


def read_evidence(evidence: str) -> TestResults | None:
    """The failing ids listed by the output's parser (``failing tests (N):`` in
    the condensed evidence), when no report was available: incomplete, since
    text rarely names the tests that passed."""
    results = TestResults(source="output text", complete=False)
    listing = False
    for line in evidence.splitlines():
        if _FAILING_HEADING.match(line):
            listing = True
            continue
        if listing:
            if not line.startswith("  "):
                break
            kind: TestStatus = "errored" if line.strip().startswith("ERROR ") else "failed"
            results.add(_MESSAGE.sub("", _KIND.sub("", line.strip())), kind)
    return results if results.outcomes else None


# -- node's test runner (node --test) ------------------------------------------

_TAP_SUBTEST = lazy_compile(r"^(?P<indent>\s*)# Subtest: (?P<name>.*)$")
_TAP_RESULT = lazy_compile(
    r"^(?P<indent>\s*)(?P<ok>ok|not ok) \d+ - (?P<name>.*?)"
    r"(?: # (?P<directive>SKIP|TODO)\b.*)?$",
    re.IGNORECASE,
)
_TAP_LOCATION = lazy_compile(r"^\s*location: '(?P<file>.+?)(?::\d+){1,2}'$")
_TAP_SUITE = lazy_compile(r"^\s*type: 'suite'$")


def read_node_events(text: Output, project_dir: Path) -> TestResults | None:
    """Results from the JSON lines of stepkit's reporter for node's test
    runner (:data:`stepkit.workspace.testrunners.NODE_REPORTER`): one
    ``start``, ``pass`` or ``fail`` event per test with its file and nesting;
    ``file › suite › name`` ids, suites left out."""
    results = TestResults(source="node --test report")
    stack: list[str] = []
    for line in lines_of(text):
        event = json_object(line)
        if event is None or not isinstance(event.get("nesting"), int):
            continue
        depth, name = event["nesting"], str(event.get("name", ""))
        if event.get("type") == "start":
            stack = [*stack[:depth], name]
        elif event.get("kind") != "suite":
            status: TestStatus = (
                "skipped"
                if event.get("skip") or event.get("todo")
                else ("passed" if event.get("type") == "pass" else "failed")
            )
            parts = [_relative(str(event.get("file") or ""), project_dir), *stack[:depth], name]
            results.add(JEST_SEPARATOR.join(p for p in parts if p), status)
    return results


def read_node_tap(text: Output, project_dir: Path) -> TestResults | None:
    """Results from node's TAP reporter (``file › suite › name`` ids, the
    file from each failure's ``location``: TAP names none for a pass, so the
    list is incomplete; suites are not tests).  None: no test result in it."""
    results = TestResults(source="node --test TAP", complete=False)
    stack: list[str] = []
    waiting: tuple[list[str], TestStatus] | None = None  # a result line whose YAML block may follow
    block: list | None = None  # [file, is a suite] of the YAML block being read

    def settle(file: str | None, suite: bool) -> None:
        assert waiting is not None
        parts, status = waiting
        if not suite:
            parts[0] = _relative(file, project_dir) if file else ""
            results.add(JEST_SEPARATOR.join(p for p in parts if p), status)

    for line in lines_of(text):
        if waiting is not None and block is None and line.strip() == "---":
            block = [None, False]
            continue
        if block is not None:
            if line.strip() == "...":
                settle(*block)
                waiting = block = None
            elif loc := _TAP_LOCATION.match(line):
                block[0] = loc["file"]
            else:
                block[1] = block[1] or bool(_TAP_SUITE.match(line))
            continue
        if waiting is not None:
            settle(None, False)
            waiting = None
        opened = _TAP_SUBTEST.match(line)
        if opened:
            depth = len(opened["indent"]) // 4
            stack = [*stack[:depth], opened["name"]]
            continue
        m = _TAP_RESULT.match(line)
        if not m:
            continue
        depth = len(m["indent"]) // 4
        status: TestStatus = (
            "skipped" if m["directive"] else ("passed" if m["ok"] == "ok" else "failed")
        )
        waiting = (["", *stack[:depth], m["name"]], status)
        stack = stack[:depth]
    if waiting is not None:
        settle(*(block or (None, False)))
    return results if results.outcomes else None


_SPEC_FAILING = lazy_compile(r"^✖ failing tests:$")
_SPEC_AT = lazy_compile(r"^test at (?P<file>.+?)(?::\d+){1,2}$")
_SPEC_NAME = lazy_compile(r"^✖ (?P<name>.+?) \([\d.]+m?s\)")


def read_node_spec(text: Output, project_dir: Path) -> TestResults | None:
    """The failing tests of node's spec reporter, from its closing ``✖
    failing tests:`` list (``file › name``): incomplete, since the passes
    are not named there."""
    results = TestResults(source="node --test spec", complete=False)
    listing, file = False, None
    for raw in lines_of(text):
        line = raw.rstrip()
        if _SPEC_FAILING.match(line):
            listing = True
        elif listing and (at := _SPEC_AT.match(line)):
            file = _relative(at["file"], project_dir)
        elif listing and file and (name := _SPEC_NAME.match(line)):
            results.add(f"{file}{JEST_SEPARATOR}{name['name']}", "failed")
            file = None
    return results if results.outcomes else None


def read_node_output(text: Output, project_dir: Path) -> TestResults | None:
    """node's test results from its output, TAP or spec."""
    return read_node_tap(text, project_dir) or read_node_spec(text, project_dir)
