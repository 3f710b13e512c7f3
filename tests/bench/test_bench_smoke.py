"""Every script in bench/ runs: its ``--smoke`` mode (the smallest run that
goes through every code path) exits 0, so a broken benchmark fails the
suite.  The figures are not judged here; bench/run.py judges them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.e2e import clean_env

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(path.name for path in BENCH.glob("*.py"))
#: the longest smoke runs, each in a file of its own so the suite's workers run them side by side
ON_THEIR_OWN = ("run.py", "model_traffic.py")

pytestmark = pytest.mark.bench


def test_every_bench_script_has_a_smoke_test():
    assert set(SCRIPTS) == set(SMOKE_ARGS), "give the new script a --smoke mode and an entry here"


SMOKE_ARGS = {name: ["--smoke"] for name in SCRIPTS}


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s not in ON_THEIR_OWN])
def test_the_bench_script_runs(script, tmp_path):
    run_smoke(script, tmp_path)


def run_smoke(script: str, tmp_path: Path) -> None:
    """Run ``script --smoke``; it must exit 0."""
    args = [*SMOKE_ARGS[script], *(["--out", str(tmp_path / "results.json")] if script == "run.py" else [])]
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=tmp_path, env=clean_env(),
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    if script == "run.py":
        assert (tmp_path / "results.json").is_file()
