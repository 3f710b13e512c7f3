"""The real CLI on a pseudo-terminal: what a person at a terminal sees, and
one answer typed once a question is on the screen."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path


def on_terminal(
    args: list[str], cwd: Path, env: dict[str, str], question: bytes, answer: bytes
) -> tuple[int, str]:
    """``python -m stepkit ARGS`` with a pseudo-terminal as stdin, stdout and
    stderr; ``answer`` is typed once ``question`` is on the screen.  Its exit
    code and the screen."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "stepkit", *args],
        cwd=cwd,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    screen, answered = b"", False
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        assert ready, f"no output from stepkit on the terminal: {screen!r}"
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: stepkit exited
            break
        if not chunk:
            break
        screen += chunk
        if not answered and question in screen:
            os.write(leader, answer)
            answered = True
    os.close(leader)
    return proc.wait(timeout=60), screen.decode("utf-8", "replace")
