"""PHPUnit: its ``OK (N tests …)``, ``Tests: N`` and ``FAILURES!`` lines."""

from __future__ import annotations

from stepkit.workspace.runners import NoTests, TestRunner

RUNNERS = (
    TestRunner(
        name="phpunit",
        failed=(r"^FAILURES!$",),
        ran=(r"^OK \([1-9]\d* tests?|^Tests: [1-9]",),
        words=("ok", "tests", "no test"),
        no_tests=(NoTests(r"^No tests executed!$", (0, 1), "no tests executed"),),
        configs=(r"phpunit\.xml(\.dist)?",),
    ),
)
