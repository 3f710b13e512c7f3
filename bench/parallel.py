"""Wall-clock time of three independent steps with ``stepkit run --parallel 3``
against the same three steps run in turn.

Two fresh git projects, alike: a plan repo of three steps that depend on
nothing.  Each step's coder stands in for a model's latency: a command
coder that starts a child process waiting a fixed :data:`LATENCY_S` and
waits for it (``sh -c 'sleep …'``; no CPU spent), then changes nothing
(exit 0 is CODER_COMPLETE).  Every gate is ``true``, the engine is the
scripted one, and the graph is the built-in step-runner with its final
approval open to ``--answer gate_user_review=approve`` so that each run
completes in one process and commits its branch.

- ``in_turn_s``: ``stepkit run --worktree --step N`` for N = 1, 2, 3, one
  after another (three processes);
- ``parallel_s``: one ``stepkit run --parallel 3`` (a parent and three children);
- ``ratio = parallel_s / in_turn_s``: 1/3 would be perfect overlap; the
  rest is each run's own CPU (imports, git, checkpoints) sharing the cores,
  and the parent's process.

Both are medians of ``repeat`` pairs, measured in the same run.  Run it
directly (``python bench/parallel.py``) or call :func:`run`.
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

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from full_run import ANSWERS, GIT_ID, PLAN, bench_env
from options import BenchParser

from tests.support.parallel import approving_graph

STEPS = 3
REPEAT = 3
LATENCY_S = 3.0
#: the ratio that says the runs overlapped: well under running them in turn
TARGET_RATIO = 0.67


def make_project(root: Path) -> Path:
    """A git repo with a plan repo of :data:`STEPS` independent steps."""
    project = root / "project"
    steps = project / "plans" / "steps"
    steps.mkdir(parents=True)
    for number in range(1, STEPS + 1):
        text = PLAN.replace("step: 1", f"step: {number}").replace(
            "title: No-op step", f"title: Step {number}"
        )
        (steps / f"{number:02d}-step{number}.md").write_text(text, encoding="utf-8")
    (project / "plans" / "NOTES.md").write_text("# Notes\n", encoding="utf-8")
    (project / "README.md").write_text("benchmark project\n", encoding="utf-8")
    env = {**os.environ, **GIT_ID}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *command], cwd=project, env=env, check=True, capture_output=True)
    return project


def _timed(commands: list[list[str]], cwd: Path, state: Path) -> float:
    """Wall time of ``commands`` run one after another; each must complete its
    step(s).  ``state``: stepkit's state home (its locks and work trees)."""
    env = {**bench_env(), **GIT_ID, "XDG_STATE_HOME": str(state)}
    start = time.perf_counter()
    for command in commands:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(
                f"{' '.join(command[3:6])} exited {done.returncode}:\n"
                f"{done.stdout[-2000:]}{done.stderr[-2000:]}"
            )
        if json.loads(done.stdout)["outcome"] != "STEP_COMPLETE":
            raise SystemExit(f"{' '.join(command[3:6])} did not complete:\n{done.stdout[-2000:]}")
    return time.perf_counter() - start


def one_pair(root: Path, latency_s: float) -> tuple[float, float]:
    """(in turn, --parallel) wall times, each on a fresh project."""
    answers = root / "answers.yaml"
    answers.write_text(yaml.safe_dump(ANSWERS), encoding="utf-8")
    graph = approving_graph(root)

    def command(project: Path, *extra: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "stepkit",
            "run",
            "--project-dir",
            str(project),
            "--engine",
            f"scripted:{answers}",
            "--coder",
            f"command:sh -c 'sleep {latency_s}'",
            "--graph",
            str(graph),
            "--answer",
            "gate_user_review=approve",
            "--json",
            *extra,
        ]

    (root / "turn").mkdir()
    (root / "parallel").mkdir()
    in_turn = make_project(root / "turn")
    together = make_project(root / "parallel")
    in_turn_s = _timed(
        [command(in_turn, "--worktree", "--step", str(n)) for n in range(1, STEPS + 1)],
        in_turn,
        root / "turn" / "state",
    )
    parallel_s = _timed(
        [command(together, "--parallel", str(STEPS))], together, root / "parallel" / "state"
    )
    return in_turn_s, parallel_s


#: ``--smoke``: the smallest run that still goes through every code path; the
#: default test suite runs it (tests/bench/), so a broken benchmark fails CI.
#: Its figures are not judged: it exits 0 once it ran to the end.
SMOKE: dict = {"repeat": 1, "latency_s": 0.2}


def run(repeat: int = REPEAT, latency_s: float = LATENCY_S) -> dict:
    """Time ``repeat`` pairs; print and return the figures."""
    pairs = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="stepkit-bench-parallel-") as tmp:
            pairs.append(one_pair(Path(tmp), latency_s))
    in_turn_s = statistics.median(pair[0] for pair in pairs)
    parallel_s = statistics.median(pair[1] for pair in pairs)
    figures = {
        "steps": STEPS,
        "repeat": repeat,
        "coder_latency_s": latency_s,
        "in_turn_s": round(in_turn_s, 3),
        "parallel_s": round(parallel_s, 3),
        "ratio": round(parallel_s / in_turn_s, 3),
        "perfect_ratio": round(1 / STEPS, 3),
        "formula": "parallel_s / in_turn_s; in turn = 3 x stepkit run --worktree --step N, "
        "parallel = stepkit run --parallel 3",
        "target_ratio": TARGET_RATIO,
    }
    figures["ok"] = figures["ratio"] < TARGET_RATIO
    for key, value in figures.items():
        print(f"{key:<18} {value}")
    return figures


if __name__ == "__main__":
    if BenchParser(__doc__).parse_args().smoke:
        run(**SMOKE)
        sys.exit(0)
    sys.exit(0 if run()["ok"] else 1)
