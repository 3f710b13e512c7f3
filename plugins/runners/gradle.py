"""gradle: the junit reports its test task writes anyway, read when this
run wrote them, ids ``Class#method``; failing ids re-run with ``--tests``;
its no-test messages (its ``Tests run:`` lines are surefire's, :mod:`.maven`)."""

from __future__ import annotations

from stepkit.plugins.runners.maven import junit_reports
from stepkit.workspace.runners import NoTests, Report, Rerun, TestRunner


def _rerun(rerun: Rerun) -> Report:
    tests = [word for i in rerun.failing for word in ("--tests", i.replace("#", "."))]
    rerun.base.command = rerun.call.append(tests)
    return rerun.base


RUNNERS = (
    TestRunner(
        name="gradle",
        command=lambda words: words[0] in ("gradle", "gradlew"),
        report=junit_reports(["build/test-results/*/*.xml", "*/build/test-results/*/*.xml"]),
        rerun=_rerun,
        words=("no test", "did not discover", "no-source"),
        no_tests=(
            NoTests(
                r"No tests found for given includes|did not discover any tests to execute",
                (1,),
                "no tests found",
            ),
            NoTests(r"^> Task :(?:\S+:)?test NO-SOURCE$", (0,), "the test task has no source"),
        ),
    ),
)
