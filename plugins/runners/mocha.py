"""mocha: its ``N passing (…)`` line."""

from __future__ import annotations

from stepkit.workspace.runners import TestRunner

RUNNERS = (TestRunner(name="mocha", ran=(r"^\s*[1-9]\d* passing \(",), words=("passing",)),)
