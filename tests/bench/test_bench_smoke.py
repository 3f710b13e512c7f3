"""Every script in bench/ runs: the quick mode of each area (its ``SMOKE``,
the smallest run that goes through every code path) runs once, through
``bench/run.py --smoke --only AREA``, so its figures also go through the
table and results.json that judge them, and a broken benchmark fails the
suite.  The figures are not judged here; bench/run.py judges them."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.e2e import clean_env

BENCH = Path(__file__).resolve().parents[2] / "bench"
#: bench/ modules that measure nothing: the runner and the scripts' command line
NOT_AREAS = ("run", "options")
#: bench/run.py's areas: every other script of bench/ is one
AREAS = sorted(path.stem for path in BENCH.glob("*.py") if path.stem not in NOT_AREAS)
#: the longest smoke runs, each in a file of its own so the suite's workers run them side by side
ON_THEIR_OWN = ("model_traffic", "parallel")


def runner_sections() -> list[tuple[str, ...]]:
    """The areas each section of bench/run.py's table reads."""
    spec = importlib.util.spec_from_file_location("bench_runner", BENCH / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [needs for needs, _ in module.ROWS]


#: what one smoke run measures: a section's areas together
SECTIONS = runner_sections()

pytestmark = pytest.mark.bench


def test_every_bench_script_is_an_area_of_the_runner():
    assert sorted(area for needs in SECTIONS for area in needs) == AREAS, (
        "give the new script a SMOKE, an entry in bench/run.py's areas and a section of its ROWS"
    )


@pytest.mark.parametrize(
    "areas", [needs for needs in SECTIONS if not set(needs) & set(ON_THEIR_OWN)], ids=",".join
)
def test_the_bench_area_runs(areas, tmp_path):
    run_smoke(areas, tmp_path)


def test_some_areas_alone_never_replace_the_whole_runs_figures(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--smoke", "--only", "nosuch"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "no area nosuch" in proc.stderr


def run_smoke(areas: tuple[str, ...], tmp_path: Path) -> None:
    """``run.py --smoke --only AREAS``: it must exit 0 and write the areas' rows."""
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run.py"),
            "--smoke",
            "--only",
            ",".join(areas),
            "--out",
            str(out),
        ],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(results["figures"]) == sorted(areas) and results["rows"], results["rows"]
