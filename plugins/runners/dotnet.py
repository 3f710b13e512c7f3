"""dotnet test: asked for trx reports (``--logger trx``) when it is the
command's last one, each test named by its name; failing ids re-run with
``--filter``; its ``Passed!``/``Failed!`` and ``Total tests`` lines."""

from __future__ import annotations

from pathlib import Path

from stepkit import quoting
from stepkit.workspace import testresults as tr
from stepkit.workspace.runners import Call, NoTests, Report, Rerun, TestRunner

_STATUS: dict[str, tr.TestStatus] = {
    "Passed": "passed",
    "Failed": "failed",
    "NotExecuted": "skipped",
    "Inconclusive": "skipped",
    "Error": "errored",
    "Timeout": "errored",
}


def read_trx(paths: list[Path]) -> tr.TestResults | None:
    """Results from dotnet ``.trx`` files (the test's name as its id)."""
    roots = tr.xml_roots(paths)
    if not roots:
        return None
    results = tr.TestResults(source="trx")
    for root in roots:
        for result in root.iter():
            if result.tag.rsplit("}", 1)[-1] == "UnitTestResult":
                results.add(
                    result.get("testName", ""),
                    _STATUS.get(result.get("outcome", ""), "errored"),
                )
    return results


def _report(call: Call, ambient: Report) -> Report:
    trx = call.report_dir / "trx"
    flags = ["--logger", "trx", "--results-directory", str(trx)]
    return Report(
        call.append(flags),
        ambient.env,
        lambda o, e: read_trx(sorted(trx.rglob("*.trx"))),
        None,
        f"stepkit asked dotnet test for a trx report: {quoting.shell(flags)}",
    )


def _rerun(rerun: Rerun) -> Report:
    selection = "|".join(f"FullyQualifiedName={i}" for i in rerun.failing)
    rerun.base.command = rerun.call.append(["--filter", selection], to=rerun.base.command)
    return rerun.base


RUNNERS = (
    TestRunner(
        name="dotnet",
        command=lambda words: words[:2] == ["dotnet", "test"],
        report=_report,
        rerun=_rerun,
        failed=(r"^Failed!\s+- Failed:\s+[1-9]",),
        ran=(r"^\s*(?:Passed|Failed)!\s+- |Total tests: [1-9]",),
        words=("passed", "failed", "total", "no test", "zero test"),
        no_tests=(
            NoTests(
                r"No test is available in |No test matches the given testcase filter",
                (0,),
                "no test is available",
            ),
            NoTests(r"Zero tests ran", (8,), "zero tests ran"),
        ),
    ),
)
