"""swift test: XCTest's ``Executed N tests`` and Swift Testing's ``Test run with N tests`` lines."""

from __future__ import annotations

from stepkit.workspace.runners import NoTests, TestRunner

RUNNERS = (
    TestRunner(
        name="swift",
        ran=(r"Executed [1-9]\d* tests?, with |Test run with [1-9]\d* tests? ",),
        words=("executed", "tests", "no test"),
        no_tests=(NoTests(r"^error: no tests found", (1,), "no tests found"),),
    ),
)
