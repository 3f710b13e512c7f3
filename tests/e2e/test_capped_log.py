"""A tests gate printing 30 MB through ``stepkit verify`` with ``[logs]
max_mb = 1``: its log is capped (head, the failure line, tail, markers) and
the verdict still names the failing test printed in the cut middle."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support.cli import stepkit
from tests.support.e2e import clean_env

GENERATOR = """\
import sys
w = sys.stdout.write
line = "tests/test_big.py::test_ok PASSED" + " " * 46 + "\\n"
w("collected 375001 items\\n")
w(line * 187_500)
w("tests/test_big.py::test_middle FAILED\\n")
w(line * 187_500)
w("=== FAILURES ===\\n")
w("FAILED tests/test_big.py::test_middle - assert 1 == 2\\n")
w("=== 1 failed, 375000 passed in 9.00s ===\\n")
sys.exit(1)
"""


def test_a_30_mb_tests_gate_leaves_a_capped_log_and_names_its_failure(tmp_path: Path):
    (tmp_path / "gen.py").write_text(GENERATOR)
    (tmp_path / "stepkit.toml").write_text(
        f'[commands]\ntests = "{sys.executable} gen.py"\n[logs]\nmax_mb = 1\n'
    )
    done = stepkit("verify", "--project-dir", str(tmp_path), "--json", env=clean_env())
    tests = json.loads(done.stdout)["gates"][-1]
    assert done.returncode == 1 and tests["status"] == "fail", done.stderr
    assert "test_middle" in tests["summary"] + tests["evidence"]
    log = Path(tests["log"]).read_text()
    assert len(log.encode()) <= 1_000_000
    assert log.startswith("collected 375001 items\n")
    assert log.endswith("=== 1 failed, 375000 passed in 9.00s ===\n")
    head_end = log.index("[stepkit: this log keeps 1000000 bytes at most")
    cut = log.index("of output cut here")
    assert head_end < log.index("tests/test_big.py::test_middle FAILED") < cut
