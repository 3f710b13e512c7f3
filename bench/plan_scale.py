"""How ``stepkit status --json`` scales with the size of the plan repo.

Generates plan repos of 100, 1,000 and 10,000 steps (each step depends on one
to three earlier steps; the first half has complete handoffs), times
``python -m stepkit status --json`` on each (median of 3 runs, whole process)
against ``python -c pass`` and against the floor of any cache keyed by file
metadata: a Python process that lists the two directories and stats every
file (``floor_s``), prints a table and returns the figures.  The files are
dated a minute back, as a plan repo that was not just written is, so the
runs after the first read the caches of the run store (the first run, which
fills them, is timed apart as ``cold_s``).  Target: 10,000 steps in at most
0.35 s.

Run it directly (``python bench/plan_scale.py``) or call :func:`run`.
``python bench/plan_scale.py --against OTHER_PYTHON`` times the 10,000-step
repo under this install and another one (a venv of an earlier commit) in
turns, with the stat floor, and gives the medians of the turn-by-turn ratios.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from options import BenchParser

SIZES = (100, 1_000, 10_000)
#: Lists ``steps/`` and ``handoffs/`` of the plan repo argv[1] and stats every file.
_FLOOR = (
    "import os, sys\n"
    "for sub in ('steps', 'handoffs'):\n"
    "    for entry in os.scandir(os.path.join(sys.argv[1], sub)):\n"
    "        entry.stat()\n"
)
REPEAT = 3
TARGET_10K_S = 0.35

_BODY = """\
# {title}

## Objective
Make step {n} of the benchmark plan work end to end.

## Context
```python
def handler_{n}(request):  # existing pattern to follow
    return respond(request, code=200)
```

## Tasks
- Add the handler for part {n} in `app/part_{n}.py`.
- Wire it into the router.

## Acceptance criteria
- `pytest tests/test_part_{n}.py` passes.

## Test commands
- `pytest -q`

## Edge cases
- Empty request body.

## Out of scope
- Anything in step {later}.
"""


def make_repo(root: Path, steps: int) -> Path:
    """Write a plan repo of ``steps`` steps with dependencies under ``root``."""
    plans = root / "plans"
    (plans / "steps").mkdir(parents=True)
    (plans / "handoffs").mkdir()
    width = len(str(steps))
    for n in range(1, steps + 1):
        deps = sorted({d for d in (n - 1, n // 2, n - 7) if d >= 1})
        status = "complete" if n <= steps // 2 else "pending"
        name = f"{n:0{width}d}-part-{n}.md"
        title = f"Part {n} of the benchmark plan"
        (plans / "steps" / name).write_text(
            f"---\nstep: {n}\ntitle: {title}\nstatus: {status}  # set by stepkit\n"
            f"depends_on: [{', '.join(map(str, deps))}]\n---\n"
            + _BODY.format(title=title, n=n, later=n + 1),
            encoding="utf-8",
        )
        if status == "complete":
            (plans / "handoffs" / name).write_text(
                f"---\nstep: {n}\ntitle: {title}\nresult: complete\n---\n## Summary\nDone.\n",
                encoding="utf-8",
            )
    (plans / "NOTES.md").write_text("# Notes\n- benchmark repo\n", encoding="utf-8")
    then = time.time() - 60
    for directory, _, files in os.walk(plans):
        for name in files:
            os.utime(os.path.join(directory, name), (then, then))
    return plans


def _median_seconds(
    command: list[str], check_steps: int | None = None, cwd: Path | None = None
) -> float:
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(
                f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}"
            )
        if check_steps is not None and len(json.loads(done.stdout)["steps"]) != check_steps:
            raise SystemExit(f"stepkit status reported the wrong number of steps for {check_steps}")
    return statistics.median(times)


#: ``--smoke``: the smallest run that still goes through every code path; the
#: default test suite runs it (tests/bench/), so a broken benchmark fails CI.
#: Its figures are not judged: it exits 0 once it ran to the end.
SMOKE: dict = {"sizes": (10,)}


def run(sizes: tuple[int, ...] = SIZES) -> dict:
    """Time ``stepkit status --json`` per repo size; print and return the figures."""
    baseline = _median_seconds([sys.executable, "-c", "pass"])
    results: dict = {
        "baseline_s": round(baseline, 4),
        "repeat": REPEAT,
        "target_10k_s": TARGET_10K_S,
        "sizes": {},
    }
    with tempfile.TemporaryDirectory(prefix="stepkit-plan-scale-") as tmp:
        for size in sizes:
            plans = make_repo(Path(tmp) / str(size), size)
            command = [
                sys.executable,
                "-m",
                "stepkit",
                "status",
                "--json",
                "--plans-dir",
                str(plans),
            ]
            start = time.perf_counter()
            subprocess.run(command, cwd=plans.parent, capture_output=True, check=True)
            cold = time.perf_counter() - start
            seconds = _median_seconds(command, check_steps=size, cwd=plans.parent)
            floor = _median_seconds([sys.executable, "-c", _FLOOR, str(plans)])
            results["sizes"][size] = {
                "seconds": round(seconds, 4),
                "cold_s": round(cold, 4),
                "floor_s": round(floor, 4),
                "ratio_to_floor": round(seconds / floor, 3),
                "over_baseline_s": round(seconds - baseline, 4),
                "ms_per_step": round((seconds - baseline) * 1000 / size, 4),
            }
    print(f"stepkit status --json, median of {REPEAT} (python -c pass: {baseline:.3f} s)")
    print(
        f"{'steps':>7}  {'total s':>8}  {'cold s':>8}  {'floor s':>8}  {'over baseline s':>15}  {'ms/step':>8}"
    )
    for size, row in results["sizes"].items():
        print(
            f"{size:>7}  {row['seconds']:>8.3f}  {row['cold_s']:>8.3f}  {row['floor_s']:>8.3f}  "
            f"{row['over_baseline_s']:>15.3f}  {row['ms_per_step']:>8.4f}"
        )
    return results


def compare(other_python: str, steps: int = 10_000, repeat: int = 5) -> dict:
    """``status --json`` on ``steps`` steps under this install and ``other_python``, in turns."""
    pythons = {"this": sys.executable, "other": other_python}

    def seconds(command: list[str], cwd: Path) -> float:
        start = time.perf_counter()
        # run outside this checkout: ``python -m`` puts the working directory first on sys.path
        subprocess.run(command, cwd=cwd, capture_output=True, check=True)
        return time.perf_counter() - start

    with tempfile.TemporaryDirectory(prefix="stepkit-plan-scale-") as tmp:
        repos = {name: make_repo(Path(tmp) / name, steps) for name in pythons}  # one run store each
        commands = {
            name: [
                python,
                "-m",
                "stepkit",
                "status",
                "--json",
                "--plans-dir",
                str(repos[name]),
                "--project-dir",
                str(repos[name].parent),
            ]
            for name, python in pythons.items()
        }
        for name, command in commands.items():
            seconds(command, repos[name].parent)  # fills the caches
        turns = [
            {
                **{
                    name: seconds(command, repos[name].parent) for name, command in commands.items()
                },
                "floor": seconds([sys.executable, "-c", _FLOOR, str(repos["this"])], Path(tmp)),
            }
            for _ in range(repeat)
        ]
    figures = {
        "steps": steps,
        "repeat": repeat,
        "other_python": other_python,
        "seconds": {
            k: round(statistics.median(t[k] for t in turns), 4) for k in ("this", "other", "floor")
        },
        "this_over_other": round(statistics.median(t["this"] / t["other"] for t in turns), 3),
        "this_over_floor": round(statistics.median(t["this"] / t["floor"] for t in turns), 3),
    }
    print(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    parser = BenchParser(__doc__)
    parser.add_against()
    args = parser.parse_args()
    if args.against:
        compare(args.against)
    else:
        run(**SMOKE) if args.smoke else run()
