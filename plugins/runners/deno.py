"""deno test: its ``ok | N passed | M failed`` line."""

from __future__ import annotations

from stepkit.workspace.runners import NoTests, TestRunner

RUNNERS = (
    TestRunner(
        name="deno",
        ran=(r"^(?:ok|FAILED) \| [1-9]\d* passed|^(?:ok|FAILED) \| \d+ passed \| [1-9]",),
        words=("passed", "ok", "no test", "0 passed"),
        no_tests=(
            NoTests(r"^error: No test modules found$", (1,), "no test modules found"),
            NoTests(r"^ok \| 0 passed \| 0 failed", (0,), "0 tests"),
        ),
    ),
)
