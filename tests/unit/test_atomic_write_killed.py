"""A writer SIGKILLed in the middle of an atomic write leaves its temp file
beside the target (in the plan repo: ``plans/steps/.01-mul.md.<…>.tmp``, as
the randomized crash test found).  The next atomic write of that file
removes the temp files of writers that are gone, and only theirs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from stepkit.workspace.files import atomic_write

#: Starts an atomic write of argv[1] and is killed while its temp file is open.
KILLED_WRITER = """import os
import signal
import sys

import stepkit.workspace.files as files


def fsync(fd):
    os.kill(os.getpid(), signal.SIGKILL)


files.os.fsync = fsync
files.atomic_write(sys.argv[1], "half")
"""


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path):
    target = tmp_path / "01-mul.md"
    target.write_text("before\n")
    script = tmp_path / "writer.py"
    script.write_text(KILLED_WRITER)
    killed = subprocess.run([sys.executable, str(script), str(target)], check=False, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    (left,) = [p.name for p in tmp_path.glob(".01-mul.md.*.tmp")]
    assert target.read_text() == "before\n"
    live = (
        tmp_path / f".01-mul.md.{os.getpid()}-inflight.tmp"
    )  # a live writer's: not ours to remove
    live.write_text("in flight")

    atomic_write(target, "after\n")
    assert target.read_text() == "after\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".01-mul.md." + f"{os.getpid()}-inflight.tmp", "01-mul.md", "writer.py"]
    ), left
