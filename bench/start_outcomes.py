"""What measuring the step's start while the coder works costs the step
(:mod:`stepkit.workspace.start_outcomes`), as the ratio of the step's wall
time with it to the same step without it, measured in the same run.

A fresh git project with a pytest suite of ``tests`` tests that each burn a
little CPU (the suite takes about a second or two here), its tests command
the only gate.  ``stepkit run`` goes from the start to the final approval
(exit 5) with the scripted engine and a command coder that sleeps (a coding
CLI mostly waits on its model: its CPU is idle).  "Without" is the same
process with the start measure switched off in it
(``start_measure`` answering None, so no job starts and every verdict takes
the path it took before: conservation unchecked, the baseline run after a
failure).  Cases:

- ``coder_works``: the coder takes about one and a half suite runs; the
  measure runs beside it at the lowest CPU priority;
- ``coder_instant``: the coder takes no time, so the tests gate runs beside
  the measure (the worst case; the gate waits for the measure only if it
  needs it: it always does, for test-id conservation);
- ``preexisting``: a committed test already fails; with the measure the
  failure is judged against it, without it the baseline runs after the
  failure, in the critical path.

Run it directly (``python bench/start_outcomes.py``) or call :func:`run`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from full_run import ANSWERS, GIT_ID, bench_env, make_project
from options import BenchParser

#: The suite: each test burns about this much CPU.
TEST = "def test_{n}():\n    assert sum(i * i for i in range({work})) > 0\n"
OLD_BUG = "\n\ndef test_old_bug():\n    assert 0.1 + 0.2 == 0.3\n"
#: One stepkit run, optionally with the start measure switched off in the process.
DRIVER = """import runpy, sys
if sys.argv[1] == "off":  # every node that begins or reads the measure finds none
    import stepkit.protocol.nodes.verify as verify
    import stepkit.protocol.start as start
    start.start_measure = verify.start_measure = lambda *args, **kwargs: None
sys.argv = ["stepkit", *sys.argv[2:]]
runpy.run_module("stepkit", run_name="__main__")
"""
SMOKE = {"tests": 20, "work": 2000, "coder_s": 0.2}


def _project(root: Path, tests: int, work: int, old_bug: bool) -> Path:
    project = make_project(root)
    (project / "tests").mkdir()
    suite = "\n\n".join(TEST.format(n=n, work=work) for n in range(tests))
    (project / "tests" / "test_suite.py").write_text(suite + (OLD_BUG if old_bug else ""))
    env = {**bench_env(), **GIT_ID}
    for command in (["add", "-A"], ["commit", "-qm", "a suite"]):
        subprocess.run(["git", *command], cwd=project, env=env, check=True, capture_output=True)
    return project


def _step(root: Path, measure: bool, coder_s: float, tests: int, work: int, old_bug: bool) -> dict:
    """One run to the final approval; its wall time and its tests gate."""
    project = _project(root, tests, work, old_bug)
    answers = root / "answers.yaml"
    answers.write_text(yaml.safe_dump(ANSWERS), encoding="utf-8")
    env = bench_env()
    env["TEST_CMD"] = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            DRIVER,
            "on" if measure else "off",
            "run",
            "--project-dir",
            str(project),
            "--engine",
            f"scripted:{answers}",
            "--coder",
            f"command:sleep {coder_s}",
            "--json",
        ],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 5:
        raise SystemExit(f"the step exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr}")
    gate = next(g for g in json.loads(done.stdout)["gates"] if g["name"] == "tests")
    return {"seconds": round(seconds, 3), "status": gate["status"], "tests_s": gate["duration_s"]}


def run(tests: int = 200, work: int = 20000, coder_s: float | None = None) -> dict:
    """Each case with and without the start measure (see the module docstring)."""
    figures: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-start-") as tmp:
        probe = _step(Path(tmp) / "probe", False, 0, tests, work, False)
        suite_s = probe["tests_s"]
        busy = coder_s if coder_s is not None else round(1.5 * suite_s, 2)
        for case, sleep, old_bug in (
            ("coder_works", busy, False),
            ("coder_instant", 0, False),
            ("preexisting", busy, True),
        ):
            without = _step(Path(tmp) / f"{case}-off", False, sleep, tests, work, old_bug)
            with_it = _step(Path(tmp) / f"{case}-on", True, sleep, tests, work, old_bug)
            figures[case] = {
                "coder_s": sleep,
                "with_s": with_it["seconds"],
                "without_s": without["seconds"],
                "ratio": round(with_it["seconds"] / without["seconds"], 3),
                "status": with_it["status"],
            }
        figures["suite_s"] = suite_s
        figures["tests"] = tests
    return figures


def main() -> int:
    args = BenchParser(__doc__).parse_args()
    figures = run(**SMOKE) if args.smoke else run()
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
