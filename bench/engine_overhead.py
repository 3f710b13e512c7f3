"""Engine overhead per node transition, checkpoints included.

A graph of 25 trivial script nodes in a line (each returns an empty
Outcome) ends at an end node; the run goes through the real engine with the
default plugin manager: per node, two atomic checkpoint writes
(``started`` and ``finished``: temp file, fsync, rename), two event lines,
the observer hooks, the worker thread that enforces timeouts and the
redaction pass.  The figure is the whole run's wall time divided by the 26
nodes it entered (the median of several runs).  Target: under 5 ms per node.

Run it directly (``python bench/engine_overhead.py``) or call :func:`run`.
"""

from __future__ import annotations

import json
import statistics
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


if __name__ == "__main__":
    args = BenchParser(__doc__).parse_args()
    print(json.dumps(run(**SMOKE) if args.smoke else run(), indent=2))
