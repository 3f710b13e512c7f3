"""jest: asked for a JSON report (``--json --outputFile``) when it is the
command's last one (also behind ``npm test``), ``file › describe › name``
ids read from it, failing ids re-run with ``-t``; its summary lines.
vitest (:mod:`.vitest`) writes the same report."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from stepkit import quoting
from stepkit.workspace import testresults as tr
from stepkit.workspace.runners import Call, NoTests, Report, Rerun, TestRunner
from stepkit.workspace.testrunners import either

_STATUS: dict[str, tr.TestStatus] = {
    "passed": "passed",
    "failed": "failed",
    "pending": "skipped",
    "skipped": "skipped",
    "todo": "skipped",
    "disabled": "skipped",
    "focused": "passed",
}
#: Joins the parts of a jest/vitest id (as jest prints ``describe › test``).
SEPARATOR = " › "
#: Words that may stand before a JavaScript runner's command.
LAUNCHERS = ("npx", "bunx", "dlx", "pnpx", "node")


def read_json(path: Path, project_dir: Path) -> tr.TestResults | None:
    """Results from a jest or vitest ``--json``/``--reporter=json`` report."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    results = tr.TestResults(source="jest JSON")
    for suite in data.get("testResults") or []:
        file = tr.relative(str(suite.get("name") or suite.get("testFilePath") or ""), project_dir)
        assertions = suite.get("assertionResults") or suite.get("testResults") or []
        for test in assertions:
            parts = [file, *(test.get("ancestorTitles") or []), str(test.get("title") or "")]
            status = _STATUS.get(str(test.get("status")), "errored")
            results.add(SEPARATOR.join(p for p in parts if p), status)
        if suite.get("status") == "failed" and not assertions:
            results.add(file, "errored")  # the file failed to run (syntax error, import)
    return results


def parts(test_id: str) -> tuple[str, str]:
    """(file, full name as ``-t`` matches it) of a jest/vitest id."""
    file, _, rest = test_id.partition(SEPARATOR)
    return file, " ".join(rest.split(SEPARATOR))


def json_report(
    name: str, flags_for: Callable[[Path], list[str]]
) -> Callable[[Call, Report], Report]:
    """The report of a runner that writes jest's JSON when given ``flags_for(path)``."""

    def report(call: Call, ambient: Report) -> Report:
        path = call.report_dir / f"{name}.json"
        flags = flags_for(path)
        return Report(
            call.append(flags),
            ambient.env,
            either(ambient.reader, lambda o, e: read_json(path, call.project)),
            None,
            f"stepkit asked {name} for a JSON report: {quoting.shell(flags)}",
        )

    return report


def rerun_by_name(rerun: Rerun) -> Report:
    """The failing tests selected by their full names (``-t``) in their files."""
    selected = [parts(i) for i in rerun.failing]
    pattern = "^(?:" + "|".join(re.escape(name) for _, name in selected) + ")$"
    files = sorted({file for file, _ in selected if file})
    rerun.base.command = rerun.call.append(["-t", pattern, *files], to=rerun.base.command)
    return rerun.base


RUNNERS = (
    TestRunner(
        name="jest",
        command=lambda words: words[0] == "jest",
        launchers=LAUNCHERS,
        behind_scripts=True,
        report=json_report("jest", lambda path: ["--json", f"--outputFile={path}"]),
        rerun=rerun_by_name,
        failed=(r"^Tests:\s+.*\b\d+ failed",),
        ran=(r"^Tests?:?\s+.*\b\d+ (?:passed|failed)",),
        words=("passed", "failed", "no test"),
        no_tests=(NoTests(r"^No tests found, exiting with code \d+", (0, 1), "no tests found"),),
        skip_markers=(
            ("skipped JS test", r"\b(it|test|describe)\.(skip|todo)\(|\bx(it|test|describe)\("),
        ),
        configs=(r"jest\.config\.\w+",),
    ),
)
