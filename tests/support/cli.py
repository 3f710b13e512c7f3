"""The real ``stepkit`` CLI as a process of this interpreter: the suite's one
runner of a command that runs to its end (a test that signals or streams a
run starts its own process).  Its output is text; a failing exit is the
test's to judge, never an exception (unless ``check``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.waiting import SAFETY_S


def stepkit(
    *args: str,
    cwd: Path | str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = SAFETY_S,
    check: bool = False,
    **run: Any,
) -> subprocess.CompletedProcess[str]:
    """``python -m stepkit ARGS`` in ``cwd`` with ``env`` (this process's
    when None), its stdout and stderr captured; ``run``: more of
    :func:`subprocess.run`'s arguments (``input``, ``stdin``)."""
    return subprocess.run(
        [sys.executable, "-m", "stepkit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
        **run,
    )
