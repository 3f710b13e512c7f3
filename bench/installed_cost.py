"""What fingerprinting the installed tools costs a gate.

Times :func:`stepkit.workspace.installed.fingerprint` over the site
directories of this interpreter (the gates' Python when a project runs
its tests with it) for a pytest command, a pytest and a ruff command, and
no command (stepkit's own files only): how many files and bytes each
covers, the first fingerprint of a process (every file read and hashed) and
the median of ``repeat`` later ones (a file is read again only when its
identity moved, :func:`stepkit.workspace.installed._sha256`).  A run takes
one fingerprint when it starts and one at every gate: the first is its
start's, the later ones its gates'.

Run it directly: ``python bench/installed_cost.py``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from options import BenchParser

from stepkit.workspace import installed
from stepkit.workspace.scope import startup

#: The test suite's run (tests/bench): one fingerprint per case.
SMOKE = {"repeat": 1}

COMMANDS = {
    "pytest": ["python -m pytest -q"],
    "pytest + ruff": ["python -m pytest -q", "ruff check"],
    "stepkit only": [],
}


def run(repeat: int = 5) -> dict[str, dict[str, float]]:
    """``{case: {"first_ms": the first, "ms": median of the later ones, "files": n, "mib": covered}}``."""
    sites = startup.site_dirs(())
    found = {}
    for case, commands in COMMANDS.items():
        installed._DIGESTS.clear()  # as in a new process
        start = time.perf_counter()
        installed.fingerprint(sites, commands)
        first = time.perf_counter() - start
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fingerprint = installed.fingerprint(sites, commands)
            times.append(time.perf_counter() - start)
        size = sum(os.path.getsize(p) for p in fingerprint if os.path.isfile(p))
        found[case] = {
            "first_ms": round(first * 1000),
            "ms": round(statistics.median(times) * 1000),
            "files": len(fingerprint),
            "mib": round(size / 2**20, 1),
        }
    return found


if __name__ == "__main__":
    args = BenchParser(__doc__).parse_args()
    for case, figures in (run(**SMOKE) if args.smoke else run()).items():
        print(
            f"{case:15} first {figures['first_ms']:5} ms  later {figures['ms']:5} ms  "
            f"{figures['files']:5} files  {figures['mib']} MiB"
        )
