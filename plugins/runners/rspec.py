"""RSpec: its closing ``N examples, M failures`` line."""

from __future__ import annotations

from stepkit.workspace.runners import NoTests, TestRunner

RUNNERS = (
    TestRunner(
        name="rspec",
        failed=(r"^\d+ examples?, [1-9]\d* failures?",),
        ran=(r"^[1-9]\d* examples?, ",),
        words=("example", "0 example", "no example"),
        no_tests=(NoTests(r"^0 examples, 0 failures|^No examples found\.$", (0,), "0 examples"),),
    ),
)
