"""ctest: asked for a junit report (``--output-junit``) when it is the
command's last one, each test named by its name; failing ids re-run with
``-R``; its ``N tests failed out of M`` line."""

from __future__ import annotations

import re

from stepkit import quoting
from stepkit.workspace import testresults as tr
from stepkit.workspace.runners import Call, NoTests, Report, Rerun, TestRunner


def _report(call: Call, ambient: Report) -> Report:
    path = call.report_dir / "ctest-junit.xml"
    flags = ["--output-junit", str(path)]
    return Report(
        call.append(flags),
        ambient.env,
        lambda o, e: tr.read_junit([path], call.project, tr.junit_name),
        None,
        f"stepkit asked ctest for a junit report: {quoting.shell(flags)}",
    )


def _rerun(rerun: Rerun) -> Report:
    pattern = "^(" + "|".join(re.escape(i) for i in rerun.failing) + ")$"
    rerun.base.command = rerun.call.append(["-R", pattern], to=rerun.base.command)
    return rerun.base


RUNNERS = (
    TestRunner(
        name="ctest",
        command=lambda words: words[0] == "ctest",
        report=_report,
        rerun=_rerun,
        failed=(r"\b[1-9]\d* tests? failed out of\b",),
        ran=(r"tests? failed out of [1-9]",),
        words=("failed", "no test"),
        no_tests=(NoTests(r"^No tests were found!!!$", (0, 8), "no tests were found"),),
    ),
)
