"""A command in a real terminal emulator: a detached tmux session of its own
(its own server socket, so the user's tmux is never touched), read with
``capture-pane`` as a person would see it, typed into with ``send-keys``.

The command's end is waited for on a tmux ``wait-for`` channel; the screen
is polled until what is waited for is on it, bounded by a deadline (tmux
signals no change of a pane's contents); nothing sleeps a fixed time."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.waiting import SAFETY_S


class Tmux:
    """One command in a tmux pane of ``width`` × ``height`` cells."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], socket: Path):
        if shutil.which("tmux") is None:
            pytest.skip("tmux is not installed (apt-get install tmux)")
        self.socket = socket
        self.done = socket.with_suffix(".exit")
        tmux = shlex.join(["tmux", "-S", str(socket)])
        command = (
            f"{shlex.join(argv)}; echo $? > {shlex.quote(str(self.done))}; "
            f"{tmux} wait-for -S ended; sleep 600"
        )
        self._tmux(
            "new-session", "-d", "-x", "120", "-y", "50", "-c", str(cwd),
            *(arg for name, value in env.items() for arg in ("-e", f"{name}={value}")),
            "sh", "-c", command,
        )  # fmt: skip

    def screen(self) -> str:
        """The pane with its scrollback, as a person sees it (no colours)."""
        out = self._tmux("capture-pane", "-p", "-J", "-S", "-1000")
        return "\n".join(line.rstrip() for line in out.splitlines()).strip("\n")

    def wait_for(self, pattern: str, seconds: float = SAFETY_S) -> str:
        """The screen, once ``pattern`` is on it."""
        deadline = time.monotonic() + seconds
        while True:
            screen = self.screen()
            if re.search(pattern, screen):
                return screen
            assert time.monotonic() < deadline, f"no {pattern!r} on the screen:\n{screen}"
            time.sleep(0.05)  # polling the pane: tmux offers nothing to wait on

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-l", text)
        self._tmux("send-keys", "Enter")

    def exit_code(self, seconds: float = SAFETY_S) -> int:
        """The command's exit code, once it ended."""
        try:
            self._tmux("wait-for", "ended", timeout=seconds)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the command did not end:\n{self.screen()}") from None
        return int(self.done.read_text())

    def close(self) -> None:
        subprocess.run(
            ["tmux", "-S", str(self.socket), "kill-server"], capture_output=True, check=False
        )

    def _tmux(self, *args: str, timeout: float = SAFETY_S) -> str:
        return subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        ).stdout
