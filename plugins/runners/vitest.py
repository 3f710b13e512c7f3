"""vitest: jest's JSON report (:mod:`.jest`) asked for beside its default
reporter, failing ids re-run with ``-t``; its summary lines."""

from __future__ import annotations

from stepkit.plugins.runners.jest import LAUNCHERS, json_report, rerun_by_name
from stepkit.workspace.runners import NoTests, TestRunner

RUNNERS = (
    TestRunner(
        name="vitest",
        command=lambda words: words[0] == "vitest",
        launchers=LAUNCHERS,
        behind_scripts=True,
        before=("jest",),
        report=json_report(
            "vitest",
            lambda path: ["--reporter=default", "--reporter=json", f"--outputFile.json={path}"],
        ),
        rerun=rerun_by_name,
        failed=(r"^\s*Tests\s+\d+ failed",),
        ran=(r"^Tests?:?\s+.*\b\d+ (?:passed|failed)",),
        words=("passed", "failed", "no test"),
        no_tests=(
            NoTests(r"^No test files found, exiting with code \d+", (0, 1), "no test files found"),
        ),
        configs=(r"vitest\.config\.\w+",),
    ),
)
