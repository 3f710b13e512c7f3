"""``stepkit verify`` on a tests command that prints hundreds of megabytes:
the stepkit process's peak memory stays bounded (the log is streamed, never
read back whole), for many identical ``FAILED`` lines, ordinary log lines
and one huge line with no newline.

The measuring is bench/big_output.py's :func:`verify_peak` (a fresh Python
around verify, so what other tests of the worker ran does not count); the
time figures against the raw pipe are the bench's, never asserted here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from big_output import TARGET_PEAK_MB, verify_peak

MB = 1_000_000


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["failed", "log"])
def test_a_100_mb_output_keeps_stepkit_under_100_mb(tmp_path, kind):
    figures = verify_peak(tmp_path, kind, 100 * MB)
    assert figures["log_complete"], "the log holds the output, capped at [logs] max_mb"
    assert figures["status"] == ("fail" if kind == "failed" else "pass")
    assert figures["peak_mb"] < TARGET_PEAK_MB, (
        f"peak RSS {figures['peak_mb']} MB for 100 MB of {kind} lines"
    )


def test_a_200_mb_line_without_newline_keeps_stepkit_under_100_mb(tmp_path):
    figures = verify_peak(tmp_path, "line", 200 * MB)
    assert figures["log_complete"] and figures["status"] == "pass"
    assert figures["peak_mb"] < TARGET_PEAK_MB, (
        f"peak RSS {figures['peak_mb']} MB for one 200 MB line"
    )
