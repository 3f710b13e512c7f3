"""Peak memory and speed of the gate runner on a huge output.

A generator writes 500 MB of 100-byte lines to stdout.  A child Python
process runs it through :func:`stepkit.workspace.gates.run_gate` (log on disk, secrets
masked, evidence condensed) and reports its own peak resident set size
(``VmHWM`` from ``/proc/self/status``: the runner only, not the generator).
For speed, the same generator is timed with its output sent to
``/dev/null``.  Target: peak RSS under 100 MB.

Run it directly (``python bench/big_output.py [MB]``) or call :func:`run`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_PEAK_MB = 100
LINE = 100  # bytes per generated line


def _generator(blocks: int) -> str:
    """A script printing ``blocks`` blocks of 10,000 lines, then one last line."""
    return (
        "import sys\n"
        f"block = b'{'y' * (LINE - 1)}\\n' * 10000\n"
        f"for _ in range({blocks}):\n"
        "    sys.stdout.buffer.write(block)\n"
        f"sys.stdout.buffer.write(b'generator done: {blocks} blocks\\n')\n"
    )


_RUNNER = """\
import json, sys, time
from pathlib import Path

def peak_kb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

from stepkit.workspace.gates import run_gate
from stepkit.pluginmanager import DEFAULT_PLUGINS, get_plugin_manager

pm = get_plugin_manager(builtins=[m for m in DEFAULT_PLUGINS if ".evidence." in m])
baseline = peak_kb()
work = Path(sys.argv[1])
start = time.monotonic()
result = run_gate("tests", sys.argv[2], None, work, work / "logs", 3600, 600, pm)
print(json.dumps({
    "status": result.status,
    "seconds": time.monotonic() - start,
    "log_bytes": Path(result.log).stat().st_size,
    "evidence_bytes": len(result.evidence.encode()),
    "summary": result.summary,
    "baseline_kb": baseline,
    "peak_kb": peak_kb(),
}))
"""


def run(size_mb: int = 500) -> dict:
    """Measure one run; returns the figures (also printed as a table)."""
    blocks = size_mb * 1_000_000 // (LINE * 10000)
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-") as tmp:
        work = Path(tmp)
        (work / "gen.py").write_text(_generator(blocks))
        command = f"{sys.executable} gen.py"

        start = time.monotonic()
        subprocess.run(f"{command} > /dev/null", shell=True, cwd=work, check=True)
        devnull_s = time.monotonic() - start

        repo = Path(__file__).resolve().parents[1]
        proc = subprocess.run(
            [sys.executable, "-c", _RUNNER, str(work), command],
            cwd=repo, capture_output=True, text=True, check=True,
        )
        child = json.loads(proc.stdout)

    expected = blocks * 10000 * LINE + len(f"generator done: {blocks} blocks\n")
    figures = {
        "output_mb": round(expected / 1e6, 1),
        "status": child["status"],
        "log_complete": child["log_bytes"] == expected,
        "evidence_bytes": child["evidence_bytes"],
        "summary": child["summary"],
        "runner_baseline_mb": round(child["baseline_kb"] / 1024, 1),
        "runner_peak_mb": round(child["peak_kb"] / 1024, 1),
        "target_peak_mb": TARGET_PEAK_MB,
        "gate_s": round(child["seconds"], 2),
        "devnull_s": round(devnull_s, 2),
        "throughput_mb_s": round(expected / 1e6 / child["seconds"], 1),
    }
    figures["ok"] = (
        figures["status"] == "pass" and figures["log_complete"] and figures["runner_peak_mb"] < TARGET_PEAK_MB
    )
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")
    return figures


if __name__ == "__main__":
    sys.exit(0 if run(int(sys.argv[1]) if len(sys.argv) > 1 else 500)["ok"] else 1)
