"""Overhead of a whole step-runner run over the commands it runs.

A fresh git project with a one-step plan repo runs through the real CLI
with the scripted engine, ``--coder command:true`` (prints nothing; exit 0
is CODER_COMPLETE) and ``true`` as every gate command (``FORMAT_CMD`` …
``TEST_CMD``).  It pauses at ``gate_user_review`` and is resumed with
``approve``.  The commands stepkit spawns (the coder and four gates, each
``sh -c true``) are run by a shell script as the baseline:
``sh -c 'sh -c true; sh -c true; sh -c true; sh -c true; sh -c true'``.

Computed (medians of ``repeat`` runs, each on a fresh project):

- ``total_s``: wall time of ``stepkit run`` + ``stepkit resume`` (two processes);
- ``nodes``: nodes entered = edges in ``state.json`` + 1 (the start node);
- ``overhead_ms_per_node = (total_s - shell_s - 2 * python_s) / nodes``,
  where ``python_s`` is ``python -c pass`` (one per stepkit process);
- ``in_graph_ms_per_node``: the same, but only the time inside the graph
  (``events.jsonl``: ``run_started`` → ``paused`` plus ``run_resumed`` →
  ``run_finished``) minus the coder's and the gates' own durations; the
  rest of ``total_s`` is process start, imports and the CLI;
- ``git_spawns``: git processes of one more (untimed) run, counted by a
  logging ``git`` wrapper first on PATH; ``git_spawns_by_kind`` per
  sub-command and options (``ls-files -z -o …``: stepkit passes ``-c
  key=value`` pairs before every sub-command), ``git_spawns_by_command``
  per sub-command.  tests/e2e/test_git_spawns.py pins the kinds.

Target: under 5 ms per node.  Run it directly (``python bench/full_run.py``)
or call :func:`run`.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from options import BenchParser
from startup import median_seconds

from stepkit.workspace.store import store_dir
from tests.support.e2e import clean_env

TARGET_MS = 5.0
REPEAT = 5
SPAWNS = 5  # the coder and the format, lint, build and tests gates

PLAN = """---
step: 1
title: No-op step
depends_on: []
status: pending
---

## Objective
Nothing to change: the benchmark times stepkit itself.

## Tasks
- Change nothing: `true` is the whole check.

## Acceptance criteria
- `true` passes.

## Test commands
- `true`

## Edge cases
- None.

## Out of scope
- Everything.
"""

ANSWERS = {
    "orient": {
        "plan_summary": "Nothing to do.",
        "implementation_brief": "Change nothing.",
        "staleness_report": "clean",
        "has_major_deviation": False,
        "deviation_summary": "",
    },
    "edge_case_sweep": {
        "edge_case_report": "None.",
        "downstream_updates": "None",
        "needs_independent_review": False,
        "annotations": [],
    },
    "write_handoff": {
        "step_summary": "Nothing changed.",
        "result": "complete",
        "summary": "No-op.",
        "completed": "- nothing",
        "not_completed": "None",
        "deviations": "None",
        "downstream_plan_updates": "None",
        "edge_cases_discovered": "None",
        "notes_for_next_step": "None",
        "notes_facts": [],
        "acceptance_criteria": [{"criterion": "C1", "tests": []}],
    },
}
GIT_ID = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def make_project(root: Path) -> Path:
    """A git repo with a README and a plan repo of one step."""
    project = root / "project"
    (project / "plans" / "steps").mkdir(parents=True)
    (project / "plans" / "steps" / "01-noop.md").write_text(PLAN, encoding="utf-8")
    (project / "plans" / "NOTES.md").write_text("# Notes\n", encoding="utf-8")
    (project / "README.md").write_text("benchmark project\n", encoding="utf-8")
    env = {**os.environ, **GIT_ID}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *command], cwd=project, env=env, check=True, capture_output=True)
    return project


def bench_env() -> dict[str, str]:
    """The environment of the stepkit processes: ``true`` for every gate, nothing inherited
    that could change the route."""
    return clean_env(FORMAT_CMD="true", LINT_CMD="true", BUILD_CMD="true", TEST_CMD="true")


def _timed(command: list[str], cwd: Path, env: dict[str, str], expect: int) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != expect:
        raise SystemExit(
            f"{' '.join(command[2:4])} exited {done.returncode}, expected {expect}:\n"
            f"{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return elapsed


def one_run(root: Path, env: dict[str, str] | None = None) -> dict:
    """One run + resume on a fresh project; wall times, nodes and in-graph time."""
    project = make_project(root)
    answers = root / "answers.yaml"
    answers.write_text(yaml.safe_dump(ANSWERS), encoding="utf-8")
    env = env or bench_env()
    stepkit = [sys.executable, "-m", "stepkit"]
    run_s = _timed(
        [
            *stepkit,
            "run",
            "--project-dir",
            str(project),
            "--engine",
            f"scripted:{answers}",
            "--coder",
            "command:true",
            "--json",
        ],
        project,
        env,
        expect=5,
    )
    resume_s = _timed(
        [*stepkit, "resume", "--project-dir", str(project), "--answer", "approve", "--json"],
        project,
        env,
        expect=0,
    )
    (run_dir,) = (store_dir(project) / "runs").iterdir()
    state = json.loads((run_dir / "state.json").read_text(encoding="utf-8"))
    events = [
        json.loads(line)
        for line in (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    coder_log = next((run_dir / "logs").glob("coder-*[0-9].log"))
    return {
        "total_s": run_s + resume_s,
        "run_s": run_s,
        "resume_s": resume_s,
        "nodes": len(state["edges"]) + 1,
        "path": [state["edges"][0][0], *(edge[1] for edge in state["edges"])],
        "outcome": state["outcome"],
        "in_graph_s": _in_graph_seconds(events),
        "commands_s": sum(
            e.get("duration_s") or 0 for e in events if e["event"] in ("gate", "delegate_finished")
        ),
        "command_events": sum(1 for e in events if e["event"] in ("gate", "delegate_finished")),
        "coder_output": coder_log.read_text(encoding="utf-8"),
    }


def stepkit_json(
    project: Path, args: list[str], env: dict[str, str], expect: int, timeout: float | None = None
) -> dict:
    """``stepkit ARGS --project-dir PROJECT --json`` as a user runs it: its
    answer; a bench stops (SystemExit, with the output's tail) on any other
    exit code than ``expect``."""
    done = subprocess.run(
        [sys.executable, "-m", "stepkit", *args, "--project-dir", str(project), "--json"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != expect:
        raise SystemExit(
            f"stepkit {args[0]} exited {done.returncode}, expected {expect}:\n"
            f"{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )
    return json.loads(done.stdout)


def _in_graph_seconds(events: list[dict]) -> float:
    """Time between run_started/run_resumed and the paused/run_finished that follows."""
    total, opened = 0.0, None
    for event in events:
        if event["event"] in ("run_started", "run_resumed"):
            opened = event["t"]
        elif event["event"] in ("paused", "run_finished") and opened is not None:
            total += event["t"] - opened
            opened = None
    return total


#: A ``git`` that logs its call's kind, one line each, then runs the real git: the
#: sub-command and its options (``ls-files -z -o``), without the ``-c key=value``
#: pairs before the sub-command (stepkit passes several on every call) or the operands.
_LOGGING_GIT = """#!/bin/sh
kind=""; skip=""; seen=""
for word in "$@"; do
  if [ -n "$skip" ]; then skip=""; continue; fi
  if [ -z "$seen" ]; then
    case "$word" in -c|-C) skip=1 ;; -*) ;; *) seen=1; kind="$word" ;; esac
    continue
  fi
  case "$word" in
    --) break ;;
    -*) kind="$kind $word" ;;
    *) if [ "$kind" = worktree ]; then kind="$kind $word"; fi ;;  # its own sub-command
  esac
done
printf '%s\\n' "$kind" >> "{log}"
exec "{git}" "$@"
"""


def git_spawns_by_kind(root: Path, env: dict[str, str] | None = None) -> dict[str, int]:
    """The git processes one run + resume spawns, per kind (sub-command and
    options: ``ls-files -z -o …``): an untimed run with a logging ``git``
    first on PATH."""
    wrapper_dir = root / "bin"
    wrapper_dir.mkdir()
    log = root / "git.log"
    wrapper = wrapper_dir / "git"
    wrapper.write_text(_LOGGING_GIT.format(log=log, git=shutil.which("git")), encoding="utf-8")
    wrapper.chmod(0o755)
    env = dict(env or bench_env())
    env["PATH"] = os.pathsep.join([str(wrapper_dir), env.get("PATH", "")])
    one_run(root, env)
    return dict(Counter(log.read_text(encoding="utf-8").splitlines()))


def by_command(kinds: dict[str, int]) -> dict[str, int]:
    """:func:`git_spawns_by_kind`'s counts summed per sub-command."""
    counts: Counter[str] = Counter()
    for kind, n in kinds.items():
        counts[kind.split()[0]] += n
    return dict(counts)


#: ``--smoke``: the smallest run that still goes through every code path; the
#: default test suite runs it (tests/bench/), so a broken benchmark fails CI.
#: Its figures are not judged: it exits 0 once it ran to the end.
SMOKE: dict = {"repeat": 1}


def run(repeat: int = REPEAT) -> dict:
    """Time ``repeat`` full runs against the baselines; print and return the figures."""
    runs = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="stepkit-bench-full-") as tmp:
            runs.append(one_run(Path(tmp)))
    if any(r["outcome"] != "STEP_COMPLETE" for r in runs):
        raise SystemExit(f"a full run did not complete: {[r['outcome'] for r in runs]}")
    if any(r["coder_output"].strip() for r in runs):
        raise SystemExit(f"command:true printed something: {runs[0]['coder_output']!r}")
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-full-") as tmp:
        git = git_spawns_by_kind(Path(tmp))
    # the baseline: a shell script spawning the same five ``sh -c true``
    shell_s = median_seconds(["sh", "-c", "; ".join(["sh -c true"] * SPAWNS)], repeat * 3)
    python_s = median_seconds([sys.executable, "-c", "pass"], repeat * 3)
    nodes = runs[0]["nodes"]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    total_s = med("total_s")
    overhead_s = total_s - shell_s - 2 * python_s
    in_graph_overhead_s = statistics.median(r["in_graph_s"] - r["commands_s"] for r in runs)
    figures = {
        "repeat": repeat,
        "nodes": nodes,
        "path": runs[0]["path"],
        "commands_spawned": runs[0]["command_events"],
        "git_spawns": sum(git.values()),
        "git_spawns_by_command": by_command(git),
        "git_spawns_by_kind": git,
        "total_s": round(total_s, 4),
        "run_s": round(med("run_s"), 4),
        "resume_s": round(med("resume_s"), 4),
        "shell_baseline_s": round(shell_s, 4),
        "shell_ms_per_spawn": round(shell_s * 1000 / SPAWNS, 3),
        "python_startup_s": round(python_s, 4),
        "ratio_total_to_shell": round(total_s / shell_s, 1),
        "overhead_s": round(overhead_s, 4),
        "overhead_ms_per_node": round(overhead_s * 1000 / nodes, 2),
        "in_graph_s": round(med("in_graph_s"), 4),
        "in_graph_overhead_ms_per_node": round(in_graph_overhead_s * 1000 / nodes, 2),
        "outside_graph_s": round(total_s - med("in_graph_s"), 4),
        "formula": "(total_s - shell_baseline_s - 2 * python_startup_s) / nodes; "
        "nodes = len(state.json edges) + 1; total = run + resume processes",
        "target_ms_per_node": TARGET_MS,
    }
    figures["ok"] = figures["overhead_ms_per_node"] < TARGET_MS
    for key, value in figures.items():
        if key != "path":
            print(f"{key:<30} {value}")
    return figures


if __name__ == "__main__":
    if BenchParser(__doc__).parse_args().smoke:
        run(**SMOKE)
        sys.exit(0)
    sys.exit(0 if run()["ok"] else 1)
