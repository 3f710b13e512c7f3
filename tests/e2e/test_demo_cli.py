"""``stepkit demo``, the README's first command: the bundled project's step 1
runs through the whole graph with real ruff and pytest gates and, with no
terminal, pauses at the final approval with the command that answers it."""

from __future__ import annotations

import subprocess
import sys

from tests.support.e2e import clean_env


def test_the_demo_runs_step_1_and_pauses_at_the_final_approval(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "stepkit", "demo"],
        check=False,
        cwd=tmp_path,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 5, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "PAUSED"  # stdout's first line is the outcome; the demo's notes go to stderr
    assert "Demo project: " in done.stderr
    assert any("waiting for an answer at gate_user_review" in line for line in lines)
    assert "stepkit resume" in done.stdout
