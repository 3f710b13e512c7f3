"""Start-up time of the commands a user runs most, and what they import.

Times ``stepkit --version``, ``stepkit status`` on a 10-step plan repo and
``stepkit graph`` (each ``python -m stepkit …`` as a fresh process; the
median of ``repeat`` runs) against ``python -c pass`` timed the same way.
Then runs ``stepkit status`` and ``stepkit graph`` in a process that
reports whether ``anthropic`` and ``pydantic`` ended up in ``sys.modules``
(neither may for ``status``: the SDK costs 1-2 s to import, pydantic 0.1 s).  Target: ``stepkit status`` under 0.3 s.

Then times ``stepkit check-handoff`` on a 10 MB handoff (:func:`big_handoff`:
a long Completed list, a pasted test log, sentences about a gate that did not
run) against the same command on a small handoff.  Target: under 1 s.

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

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from options import BenchParser
from plan_scale import make_repo

from stepkit.protocol.handoff.render import render_handoff
from stepkit.records import GateResult

TARGET_STATUS_S = 0.3
TARGET_CHECK_HANDOFF_S = 1.0
HANDOFF_BYTES = 10_000_000
REPEAT = 11

_IMPORT_PROBE = (
    "import json, sys\n"
    "from stepkit.cli import main\n"
    "main(sys.argv[1:])\n"
    "print(json.dumps({name: name in sys.modules for name in ('anthropic', 'pydantic')}))\n"
)


def median_seconds(command: list[str], repeat: int, cwd: Path | None = None) -> float:
    """Median wall time of ``repeat`` runs of ``command``; a failing run stops the bench."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(
                f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}"
            )
    return statistics.median(times)


def heavy_imports(args: list[str], cwd: Path) -> dict[str, bool]:
    """Whether ``stepkit ARGS`` run in-process leaves ``anthropic`` and ``pydantic`` imported."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    last = done.stdout.strip().splitlines()[-1]
    try:
        return json.loads(last)
    except ValueError:
        raise SystemExit(f"import probe for stepkit {' '.join(args)} printed {last!r}") from None


def big_handoff(size: int = HANDOFF_BYTES) -> str:
    """A valid handoff of about ``size`` bytes as a big step writes one: 60 %
    a Completed list (every 50th item says the build, which did not run, was
    not checked), 40 % a fenced test log in Notes, Evidence rendered by stepkit."""
    gates = [
        GateResult(name="lint", status="pass", command="ruff check .", exit_code=0),
        GateResult(name="build", status="not_run"),
        GateResult(
            name="tests", status="pass", command="pytest -q", exit_code=0, evidence="2 passed"
        ),
    ]
    items, total = [], 0
    while total < size * 0.6:
        n = len(items) + 1
        note = " The build did not run for it, so nothing says it passed." if n % 50 == 0 else ""
        items.append(
            f"- Renamed `helper_{n}` to `util_{n}` in pkg/module_{n % 97}.py; its tests pass.{note}"
        )
        total += len(items[-1]) + 1
    line = "tests/test_mod_{0}.py::test_case_{0} PASSED [{1:3d}%]"
    per_line = len(line.format(10**5, 50)) + 1
    log = "\n".join(line.format(i, i % 100) for i in range(int(size * 0.4) // per_line))
    prose = {
        "summary": "Renamed the helpers; all tests passed and lint is clean. The build did not run.",
        "completed": "\n".join(items),
        "notes_for_next_step": f"The full run:\n```text\n{log}\n```",
    }
    return render_handoff(step=1, title="Rename", result="complete", prose=prose, gates=gates)


#: ``--smoke``: the smallest run that still goes through every code path; the
#: default test suite runs it (tests/bench/), so a broken benchmark fails CI.
#: Its figures are not judged: it exits 0 once it ran to the end.
SMOKE: dict = {"repeat": 1}


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
        seconds = {
            name: median_seconds([*py, "-m", "stepkit", *args], repeat, cwd=root)
            for name, args in commands.items()
        }
        heavy = {name: heavy_imports(commands[name], root) for name in ("status", "graph")}
        anthropic = {name: found["anthropic"] for name, found in heavy.items()}
        (root / "small.md").write_text(big_handoff(2_000), encoding="utf-8")
        (root / "big.md").write_text(big_handoff(), encoding="utf-8")
        sizes = {name: (root / f"{name}.md").stat().st_size for name in ("small", "big")}
        checks = {
            name: median_seconds(
                [*py, "-m", "stepkit", "check-handoff", f"{name}.md"], min(repeat, 5), cwd=root
            )
            for name in ("small", "big")
        }
    figures = {
        "repeat": repeat,
        "python_c_pass_s": round(baseline, 4),
        "commands": {
            name: {"seconds": round(s, 4), "ratio_to_python": round(s / baseline, 2)}
            for name, s in seconds.items()
        },
        "anthropic_imported": anthropic,
        "pydantic_imported": {name: found["pydantic"] for name, found in heavy.items()},
        "target_status_s": TARGET_STATUS_S,
        "check_handoff": {
            "bytes": sizes["big"],
            "seconds": round(checks["big"], 4),
            "small_bytes": sizes["small"],
            "small_seconds": round(checks["small"], 4),
            "ratio_to_small": round(checks["big"] / checks["small"], 2),
            "target_s": TARGET_CHECK_HANDOFF_S,
        },
    }
    figures["ok"] = (
        seconds["status"] < TARGET_STATUS_S
        and not anthropic["status"]
        and not figures["pydantic_imported"]["status"]
        and checks["big"] < TARGET_CHECK_HANDOFF_S
    )
    print(f"median of {repeat} (python -c pass: {baseline:.3f} s)")
    for name, row in figures["commands"].items():
        print(f"stepkit {name:<8} {row['seconds']:.3f} s  x{row['ratio_to_python']}")
    print(f"anthropic imported: {anthropic}")
    check = figures["check_handoff"]
    print(
        f"stepkit check-handoff, {check['bytes']:,} B: {check['seconds']:.3f} s "
        f"(small handoff: {check['small_seconds']:.3f} s)"
    )
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
            pairs = [
                (
                    median_seconds([sys.executable, "-m", "stepkit", *args], 1, cwd=root),
                    median_seconds([other_python, "-m", "stepkit", *args], 1, cwd=root),
                )
                for _ in range(repeat)
            ]
            rows[name] = {
                "this_s": round(statistics.median(a for a, _ in pairs), 4),
                "other_s": round(statistics.median(b for _, b in pairs), 4),
                "ratio": round(statistics.median(a / b for a, b in pairs), 3),
            }
    for name, row in rows.items():
        print(
            f"stepkit {name:<8} this {row['this_s']:.3f} s  other {row['other_s']:.3f} s  "
            f"ratio {row['ratio']}"
        )
    return {"repeat": repeat, "other_python": other_python, "commands": rows}


if __name__ == "__main__":
    parser = BenchParser(__doc__)
    parser.add_against()
    args = parser.parse_args()
    if args.smoke:
        print(json.dumps(run(**SMOKE), indent=2))
        sys.exit(0)
    if args.against:
        print(json.dumps(compare(args.against, repeat=31), indent=2))
        sys.exit(0)
    result = run()
    print(json.dumps(result, indent=2))
    sys.exit(0 if result["ok"] else 1)
