"""Engine overhead per node transition, checkpoints included.

A graph of 25 trivial script nodes in a line (each returns an empty
Outcome) ends at an end node; the run goes through the real engine with the
default plugin manager: per node, the checkpoint written atomically when it
finished (temp file, rename; the end's also flushed to the disk), two event
lines, the observer hooks, the worker thread that enforces timeouts and the
redaction pass.  The figure is the whole run's wall time divided by the 26
nodes it entered (the median of several runs).  Target: under 5 ms per node.

Run it directly (``python bench/engine_overhead.py``) or call :func:`run`.
``python bench/engine_overhead.py --against OTHER_PYTHON`` runs this bench
under this interpreter and another one's install (e.g. a venv of an earlier
commit) in turns, in the same run, and reports each one's median and the
median of the pair-by-pair ratios (this / other).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from options import BenchParser

TARGET_MS = 5.0
NODES = 25
REPEATS = 7


def trivial(ctx):
    """The node under test: no work at all, so what is timed is the engine."""
    from stepkit.records import Outcome

    return Outcome()


def _no_stages(stage, ctx):
    """The line has no stage node: the engine's stage runner is never called."""
    raise AssertionError(f"stage {stage} in the bench graph")


def _graph_file(directory: Path) -> Path:
    nodes = {
        f"n{i:02d}": {
            "kind": "script",
            "call": "engine_overhead:trivial",
            "next": f"n{i + 1:02d}" if i + 1 < NODES else "end_success",
        }
        for i in range(NODES)
    }
    nodes["end_success"] = {
        "kind": "end",
        "sentinel": "STEP_COMPLETE",
        "exit_code": 0,
        "output": "STEP_COMPLETE",
    }
    nodes["end_failure"] = {
        "kind": "end",
        "sentinel": "STEP_FAILED",
        "exit_code": 1,
        "output": "STEP_FAILED",
    }
    path = directory / "line.yaml"
    path.write_text(yaml.safe_dump({"start": "n00", "nodes": nodes}, sort_keys=False))
    return path


#: ``--smoke``: the smallest run that still goes through every code path; the
#: default test suite runs it (tests/bench/), so a broken benchmark fails CI.
#: Its figures are not judged: it exits 0 once it ran to the end.
SMOKE: dict = {"repeats": 1}


def run(repeats: int = REPEATS) -> dict:
    """Time ``repeats`` runs of the 25-node line; report ms per node transition."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # "engine_overhead:trivial"
    from stepkit.config import Config
    from stepkit.engine.driver import start_run
    from stepkit.engine.runstore import RunStore
    from stepkit.graph.load import load_graph
    from stepkit.pluginmanager import get_plugin_manager

    per_node = []
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-") as tmp:
        project = Path(tmp)
        graph = load_graph(_graph_file(project))
        pm = get_plugin_manager()
        settings = {"project_dir": str(project), "plans_dir": str(project / "plans"), "answers": {}}
        for _ in range(repeats):
            run_dir = RunStore(project).create()
            started = time.perf_counter()
            result = start_run(
                graph, run_dir, pm, dict(settings), Config(), dict(graph.initial_state), _no_stages
            )
            elapsed = time.perf_counter() - started
            assert result.exit_code == 0, result.output
            per_node.append(elapsed * 1000 / (NODES + 1))
    median = statistics.median(per_node)
    return {
        "nodes": NODES,
        "repeats": repeats,
        "ms_per_node_median": round(median, 3),
        "ms_per_node_min": round(min(per_node), 3),
        "ms_per_node_max": round(max(per_node), 3),
        "target_ms": TARGET_MS,
        "ok": median < TARGET_MS,
    }


#: Runs of the whole bench per interpreter with ``--against``.
TURNS = 7


def compare(other_python: str, turns: int = TURNS) -> dict:
    """This install's ms per node and ``other_python``'s, the bench run in a
    process of each in turns."""

    def one(python: str) -> float:
        done = subprocess.run(
            [python, __file__], capture_output=True, text=True, check=True, cwd=Path.cwd()
        )
        return float(json.loads(done.stdout)["ms_per_node_median"])

    pairs = [(one(sys.executable), one(other_python)) for _ in range(turns)]
    this = statistics.median(a for a, _ in pairs)
    return {
        "turns": turns,
        "other_python": other_python,
        "this_ms_per_node": round(this, 3),
        "other_ms_per_node": round(statistics.median(b for _, b in pairs), 3),
        "ratio": round(statistics.median(a / b for a, b in pairs), 3),
        "target_ms": TARGET_MS,
        "ok": this < TARGET_MS,
    }


if __name__ == "__main__":
    parser = BenchParser(__doc__)
    parser.add_against()
    args = parser.parse_args()
    if args.against:
        print(json.dumps(compare(args.against), indent=2))
    else:
        print(json.dumps(run(**SMOKE) if args.smoke else run(), indent=2))
