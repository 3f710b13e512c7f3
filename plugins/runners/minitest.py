"""minitest (``rake test``, ``rails test``): its closing ``N runs, M assertions`` line."""

from __future__ import annotations

from stepkit.workspace.runners import TestRunner

RUNNERS = (
    TestRunner(name="minitest", ran=(r"^[1-9]\d* runs, \d+ assertions, ",), words=("assertions",)),
)
