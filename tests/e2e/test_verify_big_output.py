"""``stepkit verify`` on a tests command that prints hundreds of megabytes:
the stepkit process's peak memory stays bounded (the log is streamed, never
read back whole), for many identical ``FAILED`` lines, ordinary log lines
and one huge line with no newline.

Each verify runs under a fresh Python whose ``RUSAGE_CHILDREN`` peak is that
of its children only (stepkit, the shell, the generator), so what other
tests of the worker ran does not count.  Speed is bench/big_output.py's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LIMIT_MB = 100
MB = 1_000_000

#: Prints SIZE bytes of KIND lines to stdout; exits 1 for ``failed``.
GENERATOR = """\
import sys
kind, size = sys.argv[1], int(sys.argv[2])
lines = {
    "failed": ["FAILED tests/test_api.py::test_create_user - AssertionError: assert 1 == 2"],
    "log": [
        "tests/test_api.py::test_create_user[case1] PASSED                        [ 12%]",
        "2024-05-01 12:00:01,123 INFO  worker.py:88 processed batch id=42 size=128 took=0.5s",
        '{"level": "info", "msg": "request done", "status": 200, "path": "/api/v1/items/7"}',
        "error[E0308]: mismatched types --> src/main.rs:3:5 expected `u32`, found `&str`",
        "Downloading https://files.pythonhosted.org/packages/ab/cd/pkg-1.0-py3-none-any.whl",
    ],
    "line": ["x" * 999],
}[kind]
unit = ("".join(line + "\\n" for line in lines) if kind != "line" else lines[0]).encode()
block = unit * max(1, (1 << 20) // len(unit))
written = 0
while written < size:
    piece = block[:size - written]
    sys.stdout.buffer.write(piece)
    written += len(piece)
sys.stdout.flush()
sys.exit(1 if kind == "failed" else 0)
"""

#: Runs argv[1:] and prints the peak RSS (KiB) of its children as its last line.
PEAK = """\
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(done.stderr)
print(done.stdout)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def verify_peak(tmp_path: Path, kind: str, size: int) -> tuple[float, dict]:
    """(peak RSS in MB of ``stepkit verify``, its tests gate) on ``size`` bytes of ``kind`` output."""
    (tmp_path / "Makefile").write_text("test:\n\t@true\n")
    (tmp_path / "gen.py").write_text(GENERATOR)
    env = {**os.environ, "TEST_CMD": f"{sys.executable} gen.py {kind} {size}"}
    done = subprocess.run(
        [sys.executable, "-c", PEAK, sys.executable, "-m", "stepkit", "verify", "--project-dir",
         str(tmp_path), "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=True,
    )
    *out, peak = done.stdout.strip().splitlines()
    tests = json.loads("\n".join(out))["gates"][-1]
    assert Path(tests["log"]).stat().st_size == size, "the log holds the whole output"
    return int(peak) / 1024, tests


@pytest.mark.parametrize("kind", ["failed", "log"])
def test_a_100_mb_output_keeps_stepkit_under_100_mb(tmp_path, kind):
    peak, tests = verify_peak(tmp_path, kind, 100 * MB)
    assert tests["status"] == ("fail" if kind == "failed" else "pass")
    assert peak < LIMIT_MB, f"peak RSS {peak:.0f} MB for 100 MB of {kind} lines"


def test_a_200_mb_line_without_newline_keeps_stepkit_under_100_mb(tmp_path):
    peak, tests = verify_peak(tmp_path, "line", 200 * MB)
    assert tests["status"] == "pass"
    assert peak < LIMIT_MB, f"peak RSS {peak:.0f} MB for one 200 MB line"
