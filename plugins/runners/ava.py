"""AVA: its ``✔ N tests passed`` line."""

from __future__ import annotations

from stepkit.workspace.runners import TestRunner

RUNNERS = (TestRunner(name="ava", ran=(r"^\s*✔ [1-9]\d* tests? passed",), words=("passed",)),)
