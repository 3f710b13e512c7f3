"""Per-test results of a tests gate: which test ids passed, failed, errored or
were skipped, read from the runner's machine-readable report.

Here are the mechanisms every runner shares: the results themselves, JUnit
XML (which many runners write; each names its ids through a ``case_id``
function) and the failing tests the condensed evidence names (its typed
``tests``, never its text).  A runner's own
formats are read by its declaration (:mod:`stepkit.workspace.runners`,
``stepkit.plugins.runners``); which report a command is asked for, and how,
is :mod:`stepkit.workspace.testrunners`' job.

An id is stable across runs of the same tests, in the runner's own terms
(a test module and name, ``file › describe › name``, ``Class#method`` …).

:class:`TestResults` is the full list; :meth:`TestResults.record` writes it
to a file beside the gate's log and returns the compact :class:`TestsRecord`
(counts plus the failing ids) that the gate result keeps, so checkpoints
stay small however large the suite.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from pydantic import Field

from stepkit.jsontext import model_json
from stepkit.models import Model
from stepkit.records import Evidence, TestsRecord

#: A run's output: its text, or its lines as a stream (:class:`~stepkit.workspace.loglines.LogLines`).
Output = str | Iterable[str]

TestStatus = Literal["passed", "failed", "errored", "skipped"]
STATUSES: tuple[TestStatus, ...] = ("passed", "failed", "errored", "skipped")
#: Failing ids a compact record keeps (the rest are in its file).
RECORD_IDS = 100

__all__ = ["STATUSES", "TestResults", "TestStatus", "TestsRecord", "file_of"]


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

#: A JUnit ``testcase`` element's id, given the project dir.
CaseId = Callable[[ET.Element, Path], str]


def junit_id(case: ET.Element, project_dir: Path) -> str:
    """``classname.name`` (the name alone without a class name)."""
    name, classname = case.get("name", ""), case.get("classname", "")
    return f"{classname}.{name}" if classname else name


def junit_name(case: ET.Element, project_dir: Path) -> str:
    """The test's name alone."""
    return case.get("name", "")


def read_junit(
    paths: list[Path], project_dir: Path, case_id: CaseId = junit_id
) -> TestResults | None:
    """Results from JUnit XML files (None: none could be read), each test
    named by ``case_id``."""
    roots = xml_roots(paths)
    if not roots:
        return None
    results = TestResults(source="junit XML")
    for root in roots:
        for case in root.iter("testcase"):
            results.add(case_id(case, project_dir), _junit_status(case))
    return results


def xml_roots(paths: list[Path]) -> list[ET.Element]:
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


def relative(path: str, project_dir: Path) -> str:
    """``path`` relative to the project dir when it is inside it, else as given."""
    try:
        return Path(path).resolve().relative_to(project_dir.resolve()).as_posix()
    except (ValueError, OSError):
        return path


# -- the condensed evidence --------------------------------------------------


def failing_of(evidence: Evidence) -> TestResults | None:
    """The failing tests the output's parser named, when no report was
    available: incomplete, since text rarely names the tests that passed."""
    results = TestResults(source="output text", complete=False)
    for test_id, status in evidence.tests.items():
        results.add(test_id, status)
    return results if results.outcomes else None


#: What separates a test id's file from the rest: pytest's ``::``, and the
#: `` › `` the runners that name a test by its file and describe blocks use.
_ID_SEPARATORS = ("::", " › ")


def file_of(test_id: str) -> str:
    """The file part of a test id (``tests/test_x.py`` of
    ``tests/test_x.py::test_a``, ``src/a.test.ts`` of ``src/a.test.ts › adds``);
    the id itself when it has none."""
    for separator in _ID_SEPARATORS:
        test_id = test_id.split(separator, 1)[0]
    return test_id
