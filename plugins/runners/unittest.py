"""Python's unittest (``python -m unittest``): its closing lines only (it
writes no report stepkit can ask for)."""

from __future__ import annotations

from stepkit.workspace.runners import NoTests, TestRunner

RUNNERS = (
    TestRunner(
        name="unittest",
        failed=(r"^FAILED \((?:failures|errors)=",),
        ran=(r"^Ran [1-9]\d* tests? in",),
        words=("ran ", "0 test", "no test"),
        no_tests=(NoTests(r"^(?:Ran 0 tests in [\d.]+s|NO TESTS RAN)$", (0, 5), "ran 0 tests"),),
        skip_markers=(("unittest skip", r"@unittest\.skip\w*|\bunittest\.skip\w*\(|\.skipTest\("),),
    ),
)
