"""Peak memory and speed of the gate runner on a huge output, and the speed of
secret masking.

A generator writes 500 MB of 100-byte lines to stdout.  A child Python
process runs it through :func:`stepkit.workspace.gates.run_gate` (log on disk, secrets
masked, evidence condensed) and reports its own peak resident set size
(``VmHWM`` from ``/proc/self/status``: the runner only, not the generator).
Baselines measured in the same run: the generator with its output sent to
``/dev/null``, and the same gate run again with masking taken out of the
capture (a pass-through in place of :class:`stepkit.workspace.redact.Redactor`),
so the ratio of the two gate runs is what masking costs.  Target: peak RSS
under 100 MB and at least 200 MB/s through the masking gate.

Masking alone, in memory: 20 MB of log-like lines (pytest, logging
``key=value``, JSON, tracebacks, URLs, some secrets of every shape) fed to a
Redactor in 256 KiB pieces, against the pass-through; every secret must come
out masked.  Then the same lines without their secrets (ordinary log text)
against a baseline of the same text read through by ``str.find`` in the
same pieces.  Target: masking ordinary log text at 300 MB/s or more.

Then ``stepkit verify`` as a whole process (:func:`verify_peak`) on a tests
command printing MB of identical ``FAILED`` lines, of ordinary log lines,
and one 200 MB line with no newline: the peak RSS of its process tree under
100 MB, and its time at most 1.5 × the same generator piped to ``cat`` + 1 s.

Run it directly (``python bench/big_output.py [MB]``) or call :func:`run`.
``python bench/big_output.py --against OTHER_PYTHON`` times :func:`verify_peak`
for this install and another one (a venv of an earlier commit) in turns,
each verify right after its own pipe baseline.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from options import BenchParser

TARGET_PEAK_MB = 100
#: Bytes a gate's log keeps by default (``[logs] max_mb``).
LOG_CAP = 50_000_000
TARGET_MB_S = 200
TARGET_MASKING_MB_S = 300
LINE = 100  # bytes per generated line
LOG_SAMPLE_MB = 20

#: Log-like lines; ``{n}`` is a number.  The secrets are the SECRETS below.
LOG_LINES = (
    "tests/test_api.py::test_create_user[case{n}] PASSED                        [ 12%]",
    "2024-05-01 12:00:{n},123 INFO  worker.py:88 processed batch id=42 size=128 took=0.5s",
    '{{"level": "info", "msg": "request done", "status": 200, "path": "/api/v1/items/{n}"}}',
    '  File "/usr/lib/python3.11/site-packages/pkg/module.py", line {n}, in handler',
    "error[E0308]: mismatched types --> src/main.rs:{n}:5 expected `u32`, found `&str`",
    "--- PASS: TestHandler{n} (0.00s)",
    "Downloading https://files.pythonhosted.org/packages/ab/cd/pkg-{n}.0-py3-none-any.whl",
    "E       KeyError: 'user_{n}'",
    "    token = tokenizer.next_token({n})",
    "tests/test_auth.py::test_token_refresh_{n} PASSED",
)
SECRETS = {
    "DB_PASSWORD=CorrectHorseBatteryStaple": "CorrectHorseBatteryStaple",
    'db_password: "P@ss-w0rd!Strong#2024"': "P@ss-w0rd!Strong#2024",
    "connecting to postgres://admin:Pg5ecret@db": "Pg5ecret",
    "posting to https://hooks.slack.com/services/T000/B000/XXXX": "T000/B000/XXXX",
    'client_secret="abc DEF ghi 123"': "abc DEF ghi 123",
    "using ghp_a1B2c3D4e5F6g7H8i9J0a1B2c3D4e5F6g7H8": "ghp_a1B2c3D4e5F6g7H8i9J0",
}


def _generator(blocks: int) -> str:
    """A script printing ``blocks`` blocks of 10,000 lines, then one last line."""
    return (
        "import sys\n"
        f"block = b'{'y' * (LINE - 1)}\\n' * 10000\n"
        f"for _ in range({blocks}):\n"
        "    sys.stdout.buffer.write(block)\n"
        f"sys.stdout.buffer.write(b'generator done: {blocks} blocks\\n')\n"
    )


def log_sample(size: int, secrets: bool = True) -> str:
    """``size`` characters of log-like lines, one in 200 a secret (fixed seed;
    without ``secrets``, those lines are left out)."""
    rng = random.Random(13)
    lines, total, shapes = [], 0, list(SECRETS)
    while total < size:
        secret = rng.random() < 0.005
        if secret and not secrets:
            continue
        line = rng.choice(shapes) if secret else rng.choice(LOG_LINES).format(n=rng.randint(0, 99))
        lines.append(line + "\n")
        total += len(line) + 1
    return "".join(lines)


_RUNNER = """\
import json, sys, time
from pathlib import Path

def peak_kb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

from stepkit.workspace import process
from stepkit.workspace.gates import run_gate
from stepkit.workspace.redact import Redactor
from stepkit.pluginmanager import DEFAULT_PLUGINS, get_plugin_manager

class PassThrough:
    "The capture's redactor with the masking taken out."
    def feed(self, text):
        return text
    def feed_ascii(self, data):
        return data
    def take_pending(self):
        return ""
    def close(self):
        return ""

pm = get_plugin_manager(builtins=[m for m in DEFAULT_PLUGINS if ".evidence." in m])
baseline = peak_kb()
work, command = Path(sys.argv[1]), sys.argv[2]

def gate():
    start = time.monotonic()
    result = run_gate("tests", command, None, work, work / "logs", 3600, 600, pm)
    seconds = time.monotonic() - start
    size = Path(result.log).stat().st_size
    Path(result.log).unlink()
    return result, seconds, size

result, seconds, log_bytes = gate()
peak = peak_kb()
process.Redactor = PassThrough
_, unmasked_seconds, _ = gate()

sample = Path(sys.argv[3]).read_text()
def feed_all(redactor):
    start, out = time.perf_counter(), []
    for at in range(0, len(sample), 256 * 1024):
        out.append(redactor.feed(sample[at:at + 256 * 1024]))
    out.append(redactor.close())
    return time.perf_counter() - start, "".join(out)

masking_s, masked = feed_all(Redactor())
copy_s, _ = feed_all(PassThrough())

class Find:
    "Reads each piece through once, as str.find does."
    def feed(self, text):
        text.find(chr(0))
        return text
    def close(self):
        return ""

sample = Path(sys.argv[5]).read_text()
ordinary_s, ordinary_out = feed_all(Redactor())
find_s, _ = feed_all(Find())
print(json.dumps({
    "status": result.status,
    "seconds": seconds,
    "unmasked_seconds": unmasked_seconds,
    "log_bytes": log_bytes,
    "evidence_bytes": len(result.evidence.encode()),
    "summary": result.summary,
    "baseline_kb": baseline,
    "peak_kb": peak,
    "sample_chars": len(sample),
    "masking_s": masking_s,
    "copy_s": copy_s,
    "leaked": [secret for secret in json.loads(sys.argv[4]) if secret in masked],
    "ordinary_chars": len(sample),
    "ordinary_s": ordinary_s,
    "ordinary_unchanged": ordinary_out == sample,
    "find_s": find_s,
}))
"""

# -- stepkit verify as a whole process ------------------------------------------------

#: Prints SIZE bytes of KIND lines to stdout; exits 1 for ``failed``.
GENERATOR = """\
import sys
kind, size = sys.argv[1], int(sys.argv[2])
lines = {
    "failed": ["FAILED tests/test_api.py::test_create_user - AssertionError: assert 1 == 2"],
    "log": [
        "tests/test_api.py::test_create_user[case1] PASSED                        [ 12%]",
        "2024-05-01 12:00:01,123 INFO  worker.py:88 processed batch id=42 size=128 took=0.5s",
        '{"level": "info", "msg": "request done", "status": 200, "path": "/api/v1/items/7"}',
        "error[E0308]: mismatched types --> src/main.rs:3:5 expected `u32`, found `&str`",
        "Downloading https://files.pythonhosted.org/packages/ab/cd/pkg-1.0-py3-none-any.whl",
    ],
    "line": ["x" * 999],
}[kind]
unit = ("".join(line + "\\n" for line in lines) if kind != "line" else lines[0]).encode()
block = unit * max(1, (1 << 20) // len(unit))
written = 0
while written < size:
    piece = block[:size - written]
    sys.stdout.buffer.write(piece)
    written += len(piece)
if kind != "failed":  # a passing run closes as pytest's does: a tests gate must show tests ran
    sys.stdout.buffer.write(b"\\n==== 1 passed in 0.50s ====\\n")
sys.stdout.flush()
sys.exit(1 if kind == "failed" else 0)
"""

#: Runs argv[1:] and prints, as its last line, the peak RSS (KiB) of its
#: children and their CPU seconds (user + system): on a loaded machine the
#: CPU is the steadier figure.
PEAK = """\
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(done.stderr)
print(done.stdout)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(used.ru_maxrss, used.ru_utime + used.ru_stime)
"""

#: Output kinds :func:`verify_peak` can print: identical ``FAILED`` lines,
#: ordinary log lines, and one line with no newline.
KINDS = ("failed", "log", "line")


def verify_peak(work: Path, kind: str, size: int, python: str = sys.executable) -> dict:
    """``stepkit verify --json`` (of ``python``'s install) in ``work`` on a tests command printing
    ``size`` bytes of ``kind`` output: its peak RSS (the largest of its
    process tree, measured by a fresh Python around it), its seconds and
    CPU seconds (its tree's, the generator's included), the same of the
    generator piped to ``cat > /dev/null``, its tests gate and whether its
    log is whole (or, past ``[logs] max_mb``, capped)."""
    (work / "Makefile").write_text("test:\n\t@true\n")
    (work / "gen.py").write_text(GENERATOR)
    generator = f"{sys.executable} gen.py {kind} {size}"
    start = time.monotonic()
    piped = subprocess.run(
        [sys.executable, "-c", PEAK, "sh", "-c", f"{generator} | cat > /dev/null"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    pipe_s = time.monotonic() - start
    pipe_cpu_s = float(piped.stdout.split()[-1])
    env = {**os.environ, "TEST_CMD": generator}
    start = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK,
            python,
            "-m",
            "stepkit",
            "verify",
            "--project-dir",
            str(work),
            "--json",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
    )
    seconds = time.monotonic() - start
    *out, last = done.stdout.strip().splitlines()
    peak, cpu_s = last.split()
    tests = json.loads("\n".join(out))["gates"][-1]
    log_bytes = Path(tests["log"]).stat().st_size
    return {
        "peak_mb": round(int(peak) / 1024, 1),
        "seconds": round(seconds, 2),
        "pipe_s": round(pipe_s, 2),
        "cpu_s": round(float(cpu_s), 2),
        "pipe_cpu_s": round(pipe_cpu_s, 2),
        "status": tests["status"],
        "log_mb": round(log_bytes / 1e6, 1),
        "log_complete": log_whole_or_capped(log_bytes, size),
    }


def log_whole_or_capped(log_bytes: int, size: int) -> bool:
    """The log holds the whole output of ``size`` bytes when it is under half
    of ``[logs] max_mb`` (where a capped log starts cutting), else at most the cap."""
    return log_bytes == size if size <= LOG_CAP // 2 else log_bytes <= LOG_CAP


#: ``--smoke``: the smallest run that still goes through every code path; the
#: default test suite runs it (tests/bench/), so a broken benchmark fails CI.
#: Its figures are not judged: it exits 0 once it ran to the end.
SMOKE: dict = {"size_mb": 5}


def run(size_mb: int = 500) -> dict:
    """Measure one run; returns the figures (also printed as a table)."""
    blocks = size_mb * 1_000_000 // (LINE * 10000)
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-") as tmp:
        work = Path(tmp)
        (work / "gen.py").write_text(_generator(blocks))
        (work / "sample.log").write_text(log_sample(LOG_SAMPLE_MB * 1_000_000))
        (work / "ordinary.log").write_text(log_sample(LOG_SAMPLE_MB * 1_000_000, secrets=False))
        command = f"{sys.executable} gen.py"

        start = time.monotonic()
        subprocess.run(f"{command} > /dev/null", shell=True, cwd=work, check=True)
        devnull_s = time.monotonic() - start

        repo = Path(__file__).resolve().parents[1]
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                _RUNNER,
                str(work),
                command,
                str(work / "sample.log"),
                json.dumps(list(SECRETS.values())),
                str(work / "ordinary.log"),
            ],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        )
        child = json.loads(proc.stdout)

    expected = blocks * 10000 * LINE + len(f"generator done: {blocks} blocks\n")
    sample_mb = child["sample_chars"] / 1e6
    figures = {
        "output_mb": round(expected / 1e6, 1),
        "status": child["status"],
        "log_complete": log_whole_or_capped(child["log_bytes"], expected),
        "evidence_bytes": child["evidence_bytes"],
        "summary": child["summary"],
        "runner_baseline_mb": round(child["baseline_kb"] / 1024, 1),
        "runner_peak_mb": round(child["peak_kb"] / 1024, 1),
        "target_peak_mb": TARGET_PEAK_MB,
        "gate_s": round(child["seconds"], 2),
        "devnull_s": round(devnull_s, 2),
        "throughput_mb_s": round(expected / 1e6 / child["seconds"], 1),
        "unmasked_gate_s": round(child["unmasked_seconds"], 2),
        "unmasked_throughput_mb_s": round(expected / 1e6 / child["unmasked_seconds"], 1),
        "target_mb_s": TARGET_MB_S,
        "log_sample_mb": round(sample_mb, 1),
        "masking_log_mb_s": round(sample_mb / child["masking_s"], 1),
        "copy_log_mb_s": round(sample_mb / child["copy_s"], 1),
        "log_sample_leaked": child["leaked"],
        "ordinary_log_mb": round(child["ordinary_chars"] / 1e6, 1),
        "masking_ordinary_mb_s": round(child["ordinary_chars"] / 1e6 / child["ordinary_s"], 1),
        "find_ordinary_mb_s": round(child["ordinary_chars"] / 1e6 / child["find_s"], 1),
        "ordinary_unchanged": child["ordinary_unchanged"],
        "target_masking_mb_s": TARGET_MASKING_MB_S,
    }
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-verify-") as tmp:
        verify = {}
        for kind in KINDS:
            size = (
                200 if kind == "line" else size_mb
            ) * 1_000_000  # the single line: 200 MB always
            work = Path(tmp) / kind
            work.mkdir()
            verify[kind] = {"mb": size / 1e6, **verify_peak(work, kind, size)}
    figures["verify"] = verify
    figures["verify_ok"] = all(
        v["peak_mb"] < TARGET_PEAK_MB
        and v["log_complete"]
        and v["seconds"] <= 1.5 * v["pipe_s"] + 1
        for v in verify.values()
    )
    figures["ok"] = (
        figures["verify_ok"]
        and figures["status"] == "pass"
        and figures["log_complete"]
        and figures["runner_peak_mb"] < TARGET_PEAK_MB
        and figures["throughput_mb_s"] >= TARGET_MB_S
        and not figures["log_sample_leaked"]
        and figures["ordinary_unchanged"]
        and figures["masking_ordinary_mb_s"] >= TARGET_MASKING_MB_S
    )
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")
    return figures


def compare(other_python: str, rounds: int = 3) -> dict:
    """:func:`verify_peak` for this install and ``other_python`` in turns,
    ``rounds`` times per output kind; the medians of each."""
    import statistics

    turns: dict[str, dict[str, list[dict]]] = {kind: {"this": [], "other": []} for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-against-") as tmp:
        for at in range(rounds):
            for kind in KINDS:
                size = (200 if kind == "line" else 500) * 1_000_000
                for name, python in (("this", sys.executable), ("other", other_python)):
                    work = Path(tmp) / f"{kind}-{name}-{at}"
                    work.mkdir()
                    turns[kind][name].append(verify_peak(work, kind, size, python))
    figures = {
        kind: {
            name: {
                key: statistics.median(t[key] for t in runs)
                for key in ("seconds", "pipe_s", "cpu_s", "peak_mb")
            }
            | {"met": sum(t["seconds"] <= 1.5 * t["pipe_s"] + 1 for t in runs), "of": len(runs)}
            for name, runs in by_install.items()
        }
        for kind, by_install in turns.items()
    }
    print(json.dumps({"other_python": other_python, "rounds": rounds, **figures}, indent=2))
    return figures


if __name__ == "__main__":
    parser = BenchParser(__doc__)
    parser.add_against()
    parser.modes.add_argument(
        "size_mb",
        metavar="MB",
        type=int,
        nargs="?",
        default=500,
        help="megabytes the generator writes through the gate runner (default 500)",
    )
    args = parser.parse_args()
    if args.against:
        compare(args.against)
        sys.exit(0)
    if args.smoke:
        run(**SMOKE)
        sys.exit(0)
    sys.exit(0 if run(args.size_mb)["ok"] else 1)
