"""Catch2: its ``All tests passed (N assertions in M test cases)`` line."""

from __future__ import annotations

from stepkit.workspace.runners import TestRunner

RUNNERS = (
    TestRunner(
        name="catch2",
        ran=(r"^All tests passed \(\d+ assertions? in [1-9]",),
        words=("passed", "tests"),
    ),
)
