"""bun test: its ``Ran N tests across M files`` line."""

from __future__ import annotations

from stepkit.workspace.runners import TestRunner

RUNNERS = (TestRunner(name="bun", ran=(r"^Ran [1-9]\d* tests? across ",), words=("ran ",)),)
