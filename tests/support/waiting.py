"""Waiting in tests on the event itself (a file appears, a process ends),
never on a guess of how long it takes: on a loaded machine every step is
slower, and a test that fails by timing is no referee.

:data:`SAFETY_S` is the one bound: it only ends a test that hangs, and is
never what a test waits for.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

#: the longest any one wait may take before the test fails as hung
SAFETY_S = 300.0


def wait_until(
    condition: Callable[[], bool],
    what: str,
    proc: subprocess.Popen | None = None,
    seconds: float = SAFETY_S,
) -> None:
    """Return once ``condition()`` holds; fail when ``proc`` (the process
    that should bring it about) ends first, or after ``seconds`` (hung)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the process ended before {what}: {proc.communicate()}")
        assert time.monotonic() < deadline, f"hung: still no {what} after {seconds:.0f} s"
        time.sleep(0.01)  # a poll of the condition, not a wait for it
