"""What the sandbox costs each command it confines (a coder, a gate, a
``run_command`` call): the same command, ``true``, started by
:func:`stepkit.workspace.process.run` in a project, confined by a node's
policy (:mod:`stepkit.workspace.sandbox`) and unconfined, taking turns in
the same run.  The figure is the median extra time per start; target:
under 50 ms.  Without bubblewrap (or where it cannot create namespaces)
the figures say so and are not judged.

Run it directly (``python bench/sandbox_cost.py``) or call :func:`run`.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from options import BenchParser

from stepkit.workspace import process, sandbox

TARGET_MS = 50.0
REPEAT = 41
SMOKE = {"repeat": 3}


def run(repeat: int = REPEAT) -> dict:
    """The median start of ``true``, confined and not, and their difference."""
    why = sandbox.unavailable()
    if why is not None:
        return {"available": False, "why": why}
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        policy = sandbox.policy_for(project, project / ".stepkit")
        plain, confined = [], []
        with sandbox.confined(policy):
            for _ in range(repeat):
                confined.append(_seconds(project))
                with sandbox.confined(None):
                    plain.append(_seconds(project))
    plain_s, confined_s = statistics.median(plain), statistics.median(confined)
    return {
        "available": True,
        "repeat": repeat,
        "plain_ms": round(plain_s * 1000, 2),
        "confined_ms": round(confined_s * 1000, 2),
        "extra_ms": round((confined_s - plain_s) * 1000, 2),
        "ratio": round(confined_s / plain_s, 2) if plain_s else None,
    }


def _seconds(project: Path) -> float:
    start = time.perf_counter()
    result = process.run("true", cwd=project, timeout=60)
    elapsed = time.perf_counter() - start
    if result.exit_code != 0:
        raise SystemExit(f"the command failed: {result.output}")
    return elapsed


def main() -> int:
    args = BenchParser(__doc__).parse_args()
    figures = run(**SMOKE) if args.smoke else run()
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
