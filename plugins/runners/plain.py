"""A test program of the project's own, which no runner stepkit knows: its
plain closing count line says a test ran.  ``N passed, M failed`` alone on a
line (``, K skipped`` may follow; one word and a colon may stand before it),
or the same counts label first, as such programs print them (tinyxml2's
``Pass 522, Fail 0``, ``Passed: 3, Failed: 0``).  A count of 0 passed and 0
failed is no run."""

from __future__ import annotations

from stepkit.workspace.runners import TestRunner

_LABEL = r"^(?:[\w-]+:\s*)?"
_SKIPPED = r"(?:, \d+ skipped|, skip(?:ped)?:? \d+)?\s*$"


def _counts(passed: str, failed: str) -> tuple[str, str]:
    """The two forms of the line, with these patterns for the two counts."""
    return (
        rf"{_LABEL}{passed} passed, {failed} failed{_SKIPPED}",
        rf"(?i:{_LABEL}pass(?:ed)?:? {passed}, fail(?:ed)?:? {failed}{_SKIPPED})",
    )


RUNNERS = (
    TestRunner(
        name="plain count line",
        ran=(*_counts(r"[1-9]\d*", r"\d+"), *_counts(r"\d+", r"[1-9]\d*")),
        failed=_counts(r"\d+", r"[1-9]\d*"),
        words=("pass",),
    ),
)
