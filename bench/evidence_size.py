"""How much of a test log the condensed evidence keeps.

Generates pytest (``-v``), cargo test and jest (``--verbose``) logs of 2,000
tests with 5 failures (``tests/evidence_logs.py``), condenses each with the
built-in evidence parsers, and reports raw vs condensed bytes, the ratio, and
whether every failing test id and the summary line survived.  Target: under
5 % with all ids kept.

Run it directly (``python bench/evidence_size.py``) or call :func:`run`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from options import BenchParser

from stepkit.workspace.evidence import condense
from tests.support.evidence_logs import cargo_log, evidence_pm, jest_log, pytest_log

TARGET_RATIO = 0.05
CASES = {
    "pytest": (pytest_log, "python -m pytest -v"),
    "cargo": (cargo_log, "cargo test"),
    "jest": (jest_log, "npx jest --verbose"),
}


#: ``--smoke``: the smallest run that still goes through every code path; the
#: default test suite runs it (tests/bench/), so a broken benchmark fails CI.
#: Its figures are not judged: it exits 0 once it ran to the end.
SMOKE: dict = {"total": 50, "failing": 2}


def run(total: int = 2000, failing: int = 5) -> dict:
    """Condense each generated log; returns the figures per tool (also printed)."""
    pm = evidence_pm()
    figures = {}
    for tool, (generate, command) in CASES.items():
        log, failing_ids, summary_line = generate(total, failing)
        start = time.perf_counter()
        evidence = condense(pm, "tests", command, log, 1, f"/logs/{tool}.log").text
        elapsed = time.perf_counter() - start
        raw, kept = len(log.encode()), len(evidence.encode())
        figures[tool] = {
            "raw_bytes": raw,
            "condensed_bytes": kept,
            "ratio": round(kept / raw, 4),
            "all_failing_ids_kept": all(test_id in evidence for test_id in failing_ids),
            "summary_line_kept": summary_line in evidence,
            "condense_ms": round(elapsed * 1000, 1),
        }
        figures[tool]["ok"] = (
            figures[tool]["ratio"] < TARGET_RATIO
            and figures[tool]["all_failing_ids_kept"]
            and figures[tool]["summary_line_kept"]
        )
    print(f"{'tool':<8}{'raw':>10}{'condensed':>11}{'ratio':>8}  ids  summary  ms")
    for tool, f in figures.items():
        print(
            f"{tool:<8}{f['raw_bytes']:>10}{f['condensed_bytes']:>11}{f['ratio']:>8.2%}"
            f"  {'yes' if f['all_failing_ids_kept'] else 'NO ':<4} {'yes' if f['summary_line_kept'] else 'NO ':<8}"
            f"{f['condense_ms']}"
        )
    return figures


if __name__ == "__main__":
    if BenchParser(__doc__).parse_args().smoke:
        run(**SMOKE)
        sys.exit(0)
    sys.exit(0 if all(f["ok"] for f in run().values()) else 1)
