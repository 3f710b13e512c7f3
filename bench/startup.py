"""Start-up time of the commands a user runs most, and what they import.

Times ``stepkit --version``, ``stepkit status`` on a 10-step plan repo and
``stepkit graph`` (each ``python -m stepkit …`` as a fresh process; the
median of ``repeat`` runs) against ``python -c pass`` timed the same way.
Then runs ``stepkit status`` and ``stepkit graph`` in a process that
reports whether ``anthropic`` ended up in ``sys.modules`` (it must not: the
SDK costs 1-2 s to import).  Target: ``stepkit status`` under 0.3 s.

Run it directly (``python bench/startup.py``) or call :func:`run`.
``python bench/startup.py --against OTHER_PYTHON`` compares this install with
another one (e.g. a venv of an earlier commit) in the same run: the two
interpreters take turns, and each command's ratio this/other is the median
of the pair-by-pair ratios, so a machine whose speed drifts still compares
fairly.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_scale import make_repo

TARGET_STATUS_S = 0.3
REPEAT = 11

_IMPORT_PROBE = (
    "import sys\n"
    "from stepkit.cli import main\n"
    "main(sys.argv[1:])\n"
    "print('anthropic' in sys.modules)\n"
)


def median_seconds(command: list[str], repeat: int, cwd: Path | None = None) -> float:
    """Median wall time of ``repeat`` runs of ``command``; a failing run stops the bench."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
    return statistics.median(times)


def imports_anthropic(args: list[str], cwd: Path) -> bool:
    """Whether ``stepkit ARGS`` run in-process leaves ``anthropic`` imported."""
    done = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, *args], cwd=cwd,
                          capture_output=True, text=True, check=True)
    last = done.stdout.strip().splitlines()[-1]
    if last not in ("True", "False"):
        raise SystemExit(f"import probe for stepkit {' '.join(args)} printed {last!r}")
    return last == "True"


def run(repeat: int = REPEAT) -> dict:
    """Time the commands; print and return the figures."""
    py = [sys.executable]
    baseline = median_seconds([*py, "-c", "pass"], repeat)
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-startup-") as tmp:
        root = Path(tmp)
        plans = make_repo(root, 10)
        commands = {
            "version": ["--version"],
            "status": ["status", "--plans-dir", str(plans)],
            "graph": ["graph"],
        }
        seconds = {name: median_seconds([*py, "-m", "stepkit", *args], repeat, cwd=root)
                   for name, args in commands.items()}
        anthropic = {name: imports_anthropic(commands[name], root) for name in ("status", "graph")}
    figures = {
        "repeat": repeat,
        "python_c_pass_s": round(baseline, 4),
        "commands": {
            name: {"seconds": round(s, 4), "ratio_to_python": round(s / baseline, 2)}
            for name, s in seconds.items()
        },
        "anthropic_imported": anthropic,
        "target_status_s": TARGET_STATUS_S,
    }
    figures["ok"] = seconds["status"] < TARGET_STATUS_S and not anthropic["status"]
    print(f"median of {repeat} (python -c pass: {baseline:.3f} s)")
    for name, row in figures["commands"].items():
        print(f"stepkit {name:<8} {row['seconds']:.3f} s  x{row['ratio_to_python']}")
    print(f"anthropic imported: {anthropic}")
    return figures


def compare(other_python: str, repeat: int = REPEAT) -> dict:
    """Each command's median seconds under this interpreter and ``other_python``,
    run in turns, and the median of the pair-by-pair ratios (this / other)."""
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-startup-") as tmp:
        root = Path(tmp)
        plans = make_repo(root, 10)
        commands = {"version": ["--version"], "status": ["status", "--plans-dir", str(plans)]}
        rows = {}
        for name, args in commands.items():
            pairs = [(median_seconds([sys.executable, "-m", "stepkit", *args], 1, cwd=root),
                      median_seconds([other_python, "-m", "stepkit", *args], 1, cwd=root))
                     for _ in range(repeat)]
            rows[name] = {"this_s": round(statistics.median(a for a, _ in pairs), 4),
                          "other_s": round(statistics.median(b for _, b in pairs), 4),
                          "ratio": round(statistics.median(a / b for a, b in pairs), 3)}
    for name, row in rows.items():
        print(f"stepkit {name:<8} this {row['this_s']:.3f} s  other {row['other_s']:.3f} s  "
              f"ratio {row['ratio']}")
    return {"repeat": repeat, "other_python": other_python, "commands": rows}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--against"]:
        print(json.dumps(compare(sys.argv[2], repeat=31), indent=2))
        sys.exit(0)
    result = run()
    print(json.dumps(result, indent=2))
    sys.exit(0 if result["ok"] else 1)
