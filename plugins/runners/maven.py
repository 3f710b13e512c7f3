"""maven (surefire, failsafe): the junit reports it writes anyway, read
when this run wrote them, ids ``Class#method``; failing ids re-run with
``-Dtest``; surefire's ``Tests run:`` lines (gradle prints them too), and
JUnit's markers that disable a test."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from stepkit.workspace.runners import Call, NoTests, Report, Rerun, TestRunner
from stepkit.workspace.testrunners import fresh_junit


def method_id(case: ET.Element, project_dir: Path) -> str:
    """``Class#method`` (the name alone without a class)."""
    name, classname = case.get("name", ""), case.get("classname", "")
    return f"{classname}#{name}" if classname else name


def junit_reports(patterns: list[str]):
    """The report of a JVM build tool that writes junit files matching ``patterns``."""

    def report(call: Call, ambient: Report) -> Report:
        def read(output, evidence):
            paths = [p for pattern in patterns for p in call.project.glob(pattern)]
            return fresh_junit(paths, call.started, call.project, method_id)

        return Report(call.command, ambient.env, read, None, ambient.note)

    return report


def _rerun(rerun: Rerun) -> Report:
    methods: dict[str, list[str]] = {}
    for test_id in rerun.failing:
        cls, _, method = test_id.partition("#")
        methods.setdefault(cls, []).append(method)
    selection = ",".join(f"{cls}#{'+'.join(m)}" if all(m) else cls for cls, m in methods.items())
    rerun.base.command = rerun.call.append(
        [f"-Dtest={selection}", "-Dsurefire.failIfNoSpecifiedTests=false"]
    )
    return rerun.base


RUNNERS = (
    TestRunner(
        name="maven",
        command=lambda words: words[0] in ("mvn", "mvnw"),
        report=junit_reports(
            [
                "target/surefire-reports/TEST-*.xml",
                "*/target/surefire-reports/TEST-*.xml",
                "target/failsafe-reports/TEST-*.xml",
            ]
        ),
        rerun=_rerun,
        failed=(r"Tests run: \d+, Failures: (?:[1-9]|\d+, Errors: [1-9])",),
        ran=(r"Tests run: [1-9]",),
        words=("tests", "no test", "tests run: 0"),
        no_tests=(
            NoTests(
                r"No tests to run\.|Tests run: 0, Failures: 0, Errors: 0", (0,), "no tests to run"
            ),
            NoTests(
                r"No tests were executed!|No tests matching pattern", (1,), "no tests were executed"
            ),
        ),
        skip_markers=(("JUnit @Disabled/@Ignore", r"@(Disabled|Ignore)\b"),),
    ),
)
