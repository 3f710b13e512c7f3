"""Every benchmark figure of stepkit, each against a baseline measured in the same run.

    .venv/bin/python bench/run.py            # every figure (about a minute)
    .venv/bin/python bench/run.py --quick    # fewer repeats, 100 MB instead of 500 MB
    .venv/bin/python bench/run.py --only startup,plan_scale   # some areas alone

Prints one table (figure, value, baseline, ratio, target, met?) and writes
``bench/results.json`` (the rows, every area's raw figures, the machine).
The areas are the scripts next to this file, each with ``run() -> dict``:
``startup``, ``plan_scale``, ``engine_overhead`` + ``full_run``,
``big_output``, ``evidence_size``, ``model_traffic``, ``baseline_cost`` and
``pristine_cost``, ``verify_demo``, ``parallel``, ``installed_cost``,
``sandbox_cost``, ``start_outcomes`` and ``real_projects``.

Child processes run with Python's bytecode cache on, as an installed package
has it (:func:`options.bytecode_on`, as every bench script's).  Every area
works in fresh temporary directories it removes; nothing uses the network or
an API key (the model traffic goes to a loopback server with a fake key).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path[:0] = [str(BENCH), str(REPO)]

from options import BenchParser

QUICK = {
    "startup": {"repeat": 5},
    "full_run": {"repeat": 2},
    "big_output": {"size_mb": 100},
    "pristine_cost": {"tests": 200},
    "parallel": {"repeat": 1},
    "start_outcomes": {"tests": 100},
    "real_projects": {"repeat": 1},
}
COLUMNS = ("figure", "value", "baseline", "ratio", "target", "met?")


def row(
    figure: str,
    value: str,
    baseline: str = "—",
    ratio: float | None = None,
    target: str = "—",
    met: bool | None = None,
    **numbers: Any,
) -> dict[str, Any]:
    """One table row; ``numbers`` are the raw values kept in results.json."""
    return {
        "figure": figure,
        "value": value,
        "baseline": baseline,
        "ratio": ratio,
        "target": target,
        "met": met,
        **numbers,
    }


def _ratio(value: float, baseline: float) -> float | None:
    return round(value / baseline, 3) if baseline else None


# -- rows per area ---------------------------------------------------------------


def startup_rows(f: dict) -> list[dict]:
    base = f["python_c_pass_s"]
    names = {
        "version": "stepkit --version",
        "status": "stepkit status (10-step repo)",
        "graph": "stepkit graph",
    }
    rows = []
    for key, name in names.items():
        seconds = f["commands"][key]["seconds"]
        target, met = (
            (f"< {f['target_status_s']} s", seconds < f["target_status_s"])
            if key == "status"
            else ("—", None)
        )
        rows.append(
            row(
                f"1 {name}",
                f"{seconds:.3f} s",
                f"{base:.3f} s python -c pass",
                _ratio(seconds, base),
                target,
                met,
                seconds=seconds,
                baseline_s=base,
            )
        )
    check = f["check_handoff"]
    rows.append(
        row(
            f"1 stepkit check-handoff, {check['bytes'] / 1e6:.0f} MB handoff",
            f"{check['seconds']:.3f} s",
            f"{check['small_seconds']:.3f} s same, {check['small_bytes'] / 1e3:.0f} KB handoff",
            check["ratio_to_small"],
            f"< {check['target_s']:g} s",
            check["seconds"] < check["target_s"],
            seconds=check["seconds"],
            baseline_s=check["small_seconds"],
        )
    )
    imported = f["anthropic_imported"]
    rows.append(
        row(
            "1 anthropic imported by status / graph",
            f"{'yes' if imported['status'] else 'no'} / {'yes' if imported['graph'] else 'no'}",
            target="no (status)",
            met=not imported["status"],
        )
    )
    pydantic = f["pydantic_imported"]
    rows.append(
        row(
            "1 pydantic imported by status / graph",
            f"{'yes' if pydantic['status'] else 'no'} / {'yes' if pydantic['graph'] else 'no'}",
            target="no (status)",
            met=not pydantic["status"],
        )
    )
    return rows


def plan_scale_rows(f: dict) -> list[dict]:
    base = f["baseline_s"]
    sizes = sorted(f["sizes"], key=int)
    rows = []
    for size in sizes:
        seconds = f["sizes"][size]["seconds"]
        big = int(size) == 10_000
        target, met = (
            (f"<= {f['target_10k_s']} s", seconds <= f["target_10k_s"]) if big else ("—", None)
        )
        rows.append(
            row(
                f"2 status --json, {int(size):,} steps",
                f"{seconds:.3f} s",
                f"{base:.3f} s python -c pass",
                _ratio(seconds, base),
                target,
                met,
                seconds=seconds,
                baseline_s=base,
            )
        )
        if big:
            floor = f["sizes"][size]["floor_s"]
            rows.append(
                row(
                    "2 status --json, 10,000 steps, against the stat floor",
                    f"{seconds:.3f} s",
                    f"{floor:.3f} s python listing + stat of every file",
                    _ratio(seconds, floor),
                    seconds=seconds,
                    baseline_s=floor,
                )
            )
            cold = f["sizes"][size]["cold_s"]
            rows.append(
                row(
                    "2 status --json, 10,000 steps, first run (fills the cache)",
                    f"{cold:.3f} s",
                    f"{base:.3f} s python -c pass",
                    _ratio(cold, base),
                    seconds=cold,
                )
            )
    for small, big in itertools.pairwise(sizes):
        growth = f["sizes"][big]["over_baseline_s"] / f["sizes"][small]["over_baseline_s"]
        factor = int(big) / int(small)
        rows.append(
            row(
                f"2 growth {int(small):,} → {int(big):,} (time over python)",
                f"x{growth:.2f}",
                f"x{factor:g} (linear)",
                _ratio(growth, factor),
                f"≤ x{factor:g}",
                growth <= factor,
                growth=round(growth, 3),
            )
        )
    return rows


def engine_rows(full: dict, line: dict) -> list[dict]:
    spawn = full["shell_ms_per_spawn"]
    spawn_text = f"{spawn:.2f} ms one sh -c true"
    return [
        row(
            f"3 full step run: run + resume, {full['nodes']} nodes",
            f"{full['total_s']:.3f} s",
            f"{full['shell_baseline_s']:.4f} s sh script, {full['commands_spawned']} spawns",
            _ratio(full["total_s"], full["shell_baseline_s"]),
            seconds=full["total_s"],
        ),
        row(
            "3 overhead per node, whole processes",
            f"{full['overhead_ms_per_node']:.1f} ms",
            spawn_text,
            _ratio(full["overhead_ms_per_node"], spawn),
            f"< {full['target_ms_per_node']:g} ms",
            full["ok"],
            ms=full["overhead_ms_per_node"],
        ),
        row(
            "3 overhead in total (over sh script + 2 python)",
            f"{full['overhead_s']:.3f} s",
            f"{full['shell_baseline_s']:.4f} s sh script",
            _ratio(full["overhead_s"], full["shell_baseline_s"]),
            seconds=full["overhead_s"],
        ),
        row(
            "3 ↳ outside the graph: 2 processes' start, imports, CLI",
            f"{full['outside_graph_s']:.3f} s",
            f"{2 * full['python_startup_s']:.3f} s 2 × python -c pass",
            _ratio(full["outside_graph_s"], 2 * full["python_startup_s"]),
            seconds=full["outside_graph_s"],
        ),
        row(
            "3 ↳ git processes spawned by run + resume",
            str(full["git_spawns"]),
            f"{full['commands_spawned']} command spawns",
            _ratio(full["git_spawns"], full["commands_spawned"]),
            count=full["git_spawns"],
        ),
        row(
            "3 ↳ inside the graph, per node (events.jsonl)",
            f"{full['in_graph_overhead_ms_per_node']:.1f} ms",
            spawn_text,
            _ratio(full["in_graph_overhead_ms_per_node"], spawn),
            ms=full["in_graph_overhead_ms_per_node"],
        ),
        row(
            f"3 ↳ engine transition, {line['nodes']} trivial nodes",
            f"{line['ms_per_node_median']:.2f} ms",
            spawn_text,
            _ratio(line["ms_per_node_median"], spawn),
            f"< {line['target_ms']:g} ms",
            line["ok"],
            ms=line["ms_per_node_median"],
        ),
    ]


def big_output_rows(f: dict) -> list[dict]:
    mb = f["output_mb"]
    names = {
        "failed": "identical FAILED lines",
        "log": "ordinary log lines",
        "line": "one line, no newline",
    }
    verify = []
    for kind, v in f["verify"].items():
        verify += [
            row(
                f"4 stepkit verify peak RSS, {v['mb']:g} MB {names[kind]}",
                f"{v['peak_mb']:.1f} MB",
                f"{v['mb']:g} MB output",
                _ratio(v["peak_mb"], v["mb"]),
                f"< {f['target_peak_mb']} MB",
                v["peak_mb"] < f["target_peak_mb"] and v["log_complete"],
                mb=v["peak_mb"],
            ),
            row(
                f"4 stepkit verify time, {v['mb']:g} MB {names[kind]}",
                f"{v['seconds']:.2f} s",
                f"{v['pipe_s']:.2f} s generator | cat",
                _ratio(v["seconds"], v["pipe_s"]),
                "<= 1.5 × pipe + 1 s",
                v["seconds"] <= 1.5 * v["pipe_s"] + 1,
                seconds=v["seconds"],
            ),
            row(
                f"4 stepkit verify CPU, {v['mb']:g} MB {names[kind]}",
                f"{v['cpu_s']:.2f} s",
                f"{v['pipe_cpu_s']:.2f} s generator | cat",
                _ratio(v["cpu_s"], v["pipe_cpu_s"]),
                seconds=v["cpu_s"],
            ),
        ]
    return [
        *verify,
        row(
            f"4 peak RSS, {mb:g} MB gate output",
            f"{f['runner_peak_mb']:.1f} MB",
            f"{f['runner_baseline_mb']:.1f} MB before the gate",
            _ratio(f["runner_peak_mb"], f["runner_baseline_mb"]),
            f"< {f['target_peak_mb']} MB",
            f["runner_peak_mb"] < f["target_peak_mb"],
            mb=f["runner_peak_mb"],
        ),
        row(
            f"4 time, {mb:g} MB gate output",
            f"{f['gate_s']:.2f} s",
            f"{f['devnull_s']:.2f} s cmd > /dev/null",
            _ratio(f["gate_s"], f["devnull_s"]),
            seconds=f["gate_s"],
        ),
        row(
            f"4 throughput, {mb:g} MB gate output, secrets masked",
            f"{f['throughput_mb_s']:.0f} MB/s",
            f"{f['unmasked_throughput_mb_s']:.0f} MB/s masking taken out",
            _ratio(f["throughput_mb_s"], f["unmasked_throughput_mb_s"]),
            f">= {f['target_mb_s']} MB/s",
            f["throughput_mb_s"] >= f["target_mb_s"],
            mb_s=f["throughput_mb_s"],
        ),
        row(
            f"4 masking, {f['log_sample_mb']:g} MB log-like lines",
            f"{f['masking_log_mb_s']:.0f} MB/s",
            f"{f['copy_log_mb_s']:.0f} MB/s pass-through",
            _ratio(f["masking_log_mb_s"], f["copy_log_mb_s"]),
            "every secret masked",
            not f["log_sample_leaked"],
            mb_s=f["masking_log_mb_s"],
        ),
        row(
            f"4 masking, {f['ordinary_log_mb']:g} MB ordinary log lines",
            f"{f['masking_ordinary_mb_s']:.0f} MB/s",
            f"{f['find_ordinary_mb_s']:.0f} MB/s str.find read-through",
            _ratio(f["masking_ordinary_mb_s"], f["find_ordinary_mb_s"]),
            f">= {f['target_masking_mb_s']} MB/s",
            f["masking_ordinary_mb_s"] >= f["target_masking_mb_s"] and f["ordinary_unchanged"],
            mb_s=f["masking_ordinary_mb_s"],
        ),
    ]


def verify_demo_rows(f: dict) -> list[dict]:
    projects = f["project_plugins_imported"]
    return [
        row(
            "8 stepkit verify on the demo",
            f"{f['verify_s']:.3f} s",
            f"{f['shell_s']:.3f} s sh, same commands",
            f["ratio"],
            f"<= x{f['target_ratio']:g}",
            f["ratio"] <= f["target_ratio"],
            seconds=f["verify_s"],
        ),
        _verify_itsdangerous_row(f["itsdangerous"]),
        row(
            "8 ↳ the floor: a Python interpreter running the same commands",
            f"{f['floor_s']:.3f} s",
            f"{f['budget_left_ms']:.0f} ms of the target left for stepkit's own work; it spends "
            f"{f['stepkit_over_floor_ms']:.0f} ms",
            f["floor_ratio"],
            seconds=f["floor_s"],
            budget_left_ms=f["budget_left_ms"],
            stepkit_over_floor_ms=f["stepkit_over_floor_ms"],
        ),
        row(
            "8 ↳ modules imported by verify",
            str(f["modules_imported"]),
            f"{f['plugin_modules_imported']} of them built-in plugin modules",
            count=f["modules_imported"],
        ),
        row(
            "8 ↳ project-type plugins imported (demo: python)",
            str(len(projects)),
            "1 needed",
            _ratio(len(projects), 1),
            "1",
            len(projects) == 1,
            count=len(projects),
        ),
        row(
            "8 ↳ regular expressions compiled by verify",
            str(f["regexes_compiled"]),
            count=f["regexes_compiled"],
        ),
        row(
            "8 ↳ pydantic models built by verify",
            str(f["models_built"]),
            f"{f['models_defined']} defined",
            _ratio(f["models_built"], f["models_defined"]),
            count=f["models_built"],
        ),
    ]


def _verify_itsdangerous_row(its: dict) -> dict:
    """The real project's verify against its shell, or why it did not run."""
    figure, target = "8 stepkit verify on itsdangerous", f"<= x{its['target_ratio']:g}"
    if "skipped" in its:
        return row(figure, its["skipped"], target=target)
    return row(
        figure,
        f"{its['verify_s']:.3f} s",
        f"{its['shell_s']:.3f} s sh, same commands",
        its["ratio"],
        target,
        its["ok"],
        seconds=its["verify_s"],
    )


def evidence_rows(f: dict) -> list[dict]:
    return [
        row(
            f"5 evidence, {tool} log",
            f"{t['condensed_bytes']:,} B",
            f"{t['raw_bytes']:,} B raw",
            t["ratio"],
            "< 5 %, all failing ids",
            t["ok"],
            bytes=t["condensed_bytes"],
        )
        for tool, t in f.items()
    ]


def traffic_rows(f: dict) -> list[dict]:
    rows = []
    for node, t in f["traffic"].items():
        rows.append(
            row(
                f"6 {node}: request bytes ({t['requests']} req.)",
                f"{t['raw_bytes']:,} B",
                f"{t['content_bytes']:,} B its text",
                t["ratio_to_content"],
                bytes=t["raw_bytes"],
            )
        )
        rows.append(
            row(
                f"6 {node}: cached prefix",
                f"{t['prefix_bytes']:,} B",
                f"{t['bytes']:,} B request",
                t["prefix_share"],
                bytes=t["prefix_bytes"],
            )
        )
    target = f["billed"]["target_billed_ratio"]
    for scenario, nodes in f["billed"]["scenarios"].items():
        for node, t in nodes.items():
            name = f"{scenario}, all nodes" if node == "total" else f"{scenario}, {node}"
            rows.append(
                row(
                    f"6 billed input tokens, {name} ({t['requests']} req.)",
                    f"{t['billed_equivalent']:,} (full {t['input']:,} + writes "
                    f"{t['cache_write']:,} ×1.25 + {t['cache_write_1h']:,} ×2 + reads "
                    f"{t['cache_read']:,} ×0.1); ${t['usd']:.4f} with output and thinking",
                    f"{t['sent']:,} with no cache",
                    _ratio(t["billed_equivalent"], t["sent"]),
                    f"≤ {target}" if node == "total" else "—",
                    None if node != "total" else t["billed_ratio"] <= target,
                    tokens=t["billed_equivalent"],
                )
            )
    rows.append(
        row(
            "6 test-command runs after the coder's round (coder's gates passed)",
            f"{f['runs_after_coder']} ({f['test_runs_per_step']} in all)",
            f"{f['runs_after_coder_without_reuse']} without reuse "
            f"({f['test_runs_without_reuse']} in all)",
            _ratio(f["runs_after_coder"], f["runs_after_coder_without_reuse"]),
            str(f["target_test_runs"]),
            f["ok"],
            runs=f["runs_after_coder"],
        )
    )
    return rows


# -- the baseline's cost (bench/baseline_cost.py) -------------------------


def baseline_rows(f: dict) -> list[dict]:
    """Extra test runs per step: 0 on a green suite; 1 baseline run + the
    re-run of the failing ids otherwise; a later run of the same base hits the cache."""
    rows = []
    for case, label, target in (
        ("green", "green suite", 0),
        ("preexisting", "a pre-existing failure", 2),
        ("second_run", "same base again (cached)", 1),
    ):
        c = f[case]
        rows.append(
            row(
                f"7 extra test runs per step: {label}",
                str(c["extra_runs"]),
                f"{c['plain_seconds']:.2f} s plain gate",
                _ratio(c["seconds"], c["plain_seconds"]),
                str(target),
                c["extra_runs"] == target and c["status"] == "pass",
                runs=c["extra_runs"],
                seconds=c["seconds"],
            )
        )
    hit = f["second_run"]["baseline_cache_hit"]
    rows.append(
        row(
            "7 baseline cache hit on a second run of the same base",
            "yes" if hit else "no",
            target="yes",
            met=hit,
        )
    )
    return rows


# -- the pristine re-check's cost (bench/pristine_cost.py) -------------------------


def pristine_rows(f: dict) -> list[dict]:
    """The re-check against the tests gate: about one more run of the suite
    when the step changed the verification surface, nothing when it did not."""
    rows = []
    for case, label, limit in (
        ("demo", "the demo", 2.0),
        ("suite", f"{f['suite']['tests']}-test suite", 2.0),
        ("unchanged", "surface left alone", 0.1),
        ("added", "a test module added", 2.0),
    ):
        c = f[case]
        rows.append(
            row(
                f"8 pristine re-check: {label}",
                f"{c['recheck_seconds']:.2f} s",
                f"{c['tests_seconds']:.2f} s tests gate",
                c["ratio"],
                f"ratio < {limit:g}",
                c["ratio"] is not None and c["ratio"] < limit and c["status"] == "pass",
                seconds=c["recheck_seconds"],
                baseline_s=c["tests_seconds"],
            )
        )
    # the tests node as a whole: the new module alone beside the earlier tests without it
    c = f["added"]
    rows.append(
        row(
            "8 tests node, a test module added (before: "
            f"×{c['sequential_ratio']} gate then re-check)",
            f"{c['node_seconds']:.2f} s",
            f"{c['tests_seconds']:.2f} s tests gate",
            c["node_ratio"],
            "ratio < 1.3",
            c["node_ratio"] is not None and c["node_ratio"] < 1.3 and c["node_status"] == "pass",
            seconds=c["node_seconds"],
            baseline_s=c["tests_seconds"],
        )
    )
    return rows


# -- the step's start measured while the coder works (bench/start_outcomes.py) -------


def start_outcomes_rows(f: dict) -> list[dict]:
    """The step's wall time with the start measure against the same step
    without it, in the same run: no dearer while the coder works, cheaper
    when a failure needs the start."""
    rows = []
    for case, label, limit in (
        ("coder_works", "the coder works 1.5 suite runs", 1.1),
        ("coder_instant", "the coder takes no time", None),
        ("preexisting", "a failure that was there at the start", 1.0),
    ):
        c = f[case]
        rows.append(
            row(
                f"12 start measured beside the coder: {label}",
                f"{c['with_s']:.2f} s",
                f"{c['without_s']:.2f} s without it",
                c["ratio"],
                f"ratio ≤ {limit:g}" if limit is not None else "—",
                c["ratio"] <= limit and c["status"] == "pass" if limit is not None else None,
                seconds=c["with_s"],
                baseline_s=c["without_s"],
            )
        )
    return rows


# -- steps on real projects (bench/real_projects.py) ---------------------------------


def real_projects_rows(f: dict) -> list[dict]:
    """Per project and step kind: the whole-suite runs in the critical path
    (the start's measure counted when it ran beside the gate), the step
    against the suite run by hand (the median of three runs after each step),
    and stepkit's own seconds."""
    rows = []
    for name, kinds in f.items():
        if "skipped" in kinds:
            rows.append(row(f"13 {name}: steps", f"skipped: {kinds['skipped']}"))
            continue
        for kind, c in kinds.items():
            beside = (
                f", the start's measure {c['start_beside_s']:.2f} s beside"
                if c["start_beside"]
                else ""
            )
            target = c["target_whole"]
            rows.append(
                row(
                    f"13 {name}, {kind.replace('_', ' ')}: whole-suite runs in the critical path",
                    f"{c['whole']} (+{c['only']} by id{beside}); step {c['seconds']:.2f} s, "
                    f"stepkit's own {c['own_s']:.2f} s",
                    f"{c['suite_s']:.2f} s suite by hand",
                    c["ratio"],
                    f"{target}, step ≤ suite × {target} + 1.5 s",
                    c["ok"] if name != "vitest" else None,
                    runs=c["whole"],
                    seconds=c["seconds"],
                    baseline_s=c["suite_s"],
                )
            )
    return rows


# -- the sandbox's cost per command (bench/sandbox_cost.py) --------------------------


def sandbox_rows(f: dict) -> list[dict]:
    """A confined start against the same command unconfined."""
    if not f["available"]:
        return [row("11 sandbox: extra time per command start", f"no sandbox: {f['why']}")]
    extra = f["extra_ms"]
    return [
        row(
            "11 sandbox: extra time per command start (`true`)",
            f"{f['confined_ms']:.1f} ms",
            f"{f['plain_ms']:.1f} ms unconfined",
            f["ratio"],
            "< 50 ms more",
            extra < 50,
            extra_ms=extra,
        )
    ]


# -- the gates' installed tools fingerprinted (bench/installed_cost.py) --------------


def installed_rows(f: dict) -> list[dict]:
    """What one fingerprint of the gates' installed tools costs (taken when a
    run starts, the first, and at every gate, a later one): a figure to
    watch, no target."""
    return [
        row(
            f"10 installed-tools fingerprint: {case}",
            f"{c['ms']} ms",
            f"first {c['first_ms']} ms; {c['files']} files, {c['mib']} MiB covered",
            seconds=c["ms"] / 1000,
        )
        for case, c in f.items()
    ]


# -- independent steps side by side (bench/parallel.py) ------------------------------


def parallel_rows(f: dict) -> list[dict]:
    """``--parallel 3`` against the same three steps in turn: 1/3 is perfect overlap."""
    return [
        row(
            f"9 {f['steps']} independent steps, --parallel {f['steps']} (coder {f['coder_latency_s']:g} s each)",
            f"{f['parallel_s']:.2f} s",
            f"{f['in_turn_s']:.2f} s in turn (--worktree each)",
            f["ratio"],
            f"ratio < {f['target_ratio']:g}",
            f["ok"],
            seconds=f["parallel_s"],
            baseline_s=f["in_turn_s"],
        )
    ]


# -- running -----------------------------------------------------------------------


def _measure(name: str, call: Callable[[], dict]) -> tuple[dict, float]:
    print(f"… {name}", end="", file=sys.stderr, flush=True)
    started = time.monotonic()
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        figures = call()
    elapsed = time.monotonic() - started
    print(f" {elapsed:.1f} s", file=sys.stderr, flush=True)
    return figures, elapsed


def _machine() -> dict[str, Any]:
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "commit": commit or None,
    }


def render(rows: list[dict]) -> str:
    """The rows as a plain-text table."""
    cells = [COLUMNS] + [
        (
            r["figure"],
            r["value"],
            r["baseline"],
            "—" if r["ratio"] is None else f"{r['ratio']:g}",
            r["target"],
            {True: "yes", False: "NO", None: "—"}[r["met"]],
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip()
        for line in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


#: Each table section: the areas whose figures it reads, and what makes its rows.
ROWS: tuple[tuple[tuple[str, ...], Callable[..., list[dict]]], ...] = (
    (("startup",), startup_rows),
    (("plan_scale",), plan_scale_rows),
    (("full_run", "engine_overhead"), engine_rows),
    (("big_output",), big_output_rows),
    (("evidence_size",), evidence_rows),
    (("model_traffic",), traffic_rows),
    (("baseline_cost",), baseline_rows),
    (("pristine_cost",), pristine_rows),
    (("verify_demo",), verify_demo_rows),
    (("parallel",), parallel_rows),
    (("installed_cost",), installed_rows),
    (("sandbox_cost",), sandbox_rows),
    (("start_outcomes",), start_outcomes_rows),
    (("real_projects",), real_projects_rows),
)


def main(argv: list[str] | None = None) -> int:
    parser = BenchParser(__doc__)
    parser.modes.add_argument(
        "--quick",
        action="store_true",
        help="fewer repeats and a 100 MB big output (not the reference figures)",
    )
    parser.add_argument(
        "--only",
        type=lambda text: [name for name in text.split(",") if name],
        help="only these areas, comma-separated (e.g. startup,plan_scale); "
        "their rows alone are printed",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where to write the JSON (default bench/results.json; "
        "with --only, nothing unless given)",
    )
    args = parser.parse_args(argv)
    options = QUICK if args.quick else {}

    import baseline_cost
    import big_output
    import engine_overhead
    import evidence_size
    import full_run
    import installed_cost
    import model_traffic
    import parallel
    import plan_scale
    import pristine_cost
    import real_projects
    import sandbox_cost
    import start_outcomes
    import startup
    import verify_demo

    if args.smoke:
        options = {
            name: module.SMOKE
            for name, module in (
                ("startup", startup),
                ("plan_scale", plan_scale),
                ("engine_overhead", engine_overhead),
                ("full_run", full_run),
                ("big_output", big_output),
                ("evidence_size", evidence_size),
                ("model_traffic", model_traffic),
                ("baseline_cost", baseline_cost),
                ("parallel", parallel),
                ("pristine_cost", pristine_cost),
                ("verify_demo", verify_demo),
                ("installed_cost", installed_cost),
                ("sandbox_cost", sandbox_cost),
                ("start_outcomes", start_outcomes),
                ("real_projects", real_projects),
            )
        }
    load_before = [round(x, 2) for x in os.getloadavg()]
    started = time.monotonic()
    areas = {
        "startup": lambda: startup.run(**options.get("startup", {})),
        "plan_scale": lambda: plan_scale.run(**options.get("plan_scale", {})),
        "engine_overhead": lambda: engine_overhead.run(**options.get("engine_overhead", {})),
        "full_run": lambda: full_run.run(**options.get("full_run", {})),
        "big_output": lambda: big_output.run(**options.get("big_output", {})),
        "evidence_size": lambda: evidence_size.run(**options.get("evidence_size", {})),
        "model_traffic": lambda: model_traffic.run(**options.get("model_traffic", {})),
        "baseline_cost": lambda: baseline_cost.run(**options.get("baseline_cost", {})),
        "pristine_cost": lambda: pristine_cost.run(**options.get("pristine_cost", {})),
        "verify_demo": lambda: verify_demo.run(**options.get("verify_demo", {})),
        "parallel": lambda: parallel.run(**options.get("parallel", {})),
        "installed_cost": lambda: installed_cost.run(**options.get("installed_cost", {})),
        "sandbox_cost": lambda: sandbox_cost.run(**options.get("sandbox_cost", {})),
        "start_outcomes": lambda: start_outcomes.run(**options.get("start_outcomes", {})),
        "real_projects": lambda: real_projects.run(**options.get("real_projects", {})),
    }
    unknown = set(args.only or areas) - set(areas)
    if unknown:
        parser.error(f"--only: no area {', '.join(sorted(unknown))} (areas: {', '.join(areas)})")
    figures, seconds = {}, {}
    for name, call in areas.items():
        if args.only and name not in args.only:
            continue
        figures[name], seconds[name] = _measure(name, call)
    rows = [
        r
        for needs, rows_of in ROWS
        if set(needs) <= set(figures)
        for r in rows_of(*(figures[name] for name in needs))
    ]
    total_s = time.monotonic() - started
    print(render(rows))
    if "model_traffic" in figures:
        print(
            f"\ncache model of the billed tokens: {figures['model_traffic']['billed']['cache_model']}"
        )
    judged = [r for r in rows if r["met"] is not None]
    missed = [r["figure"] for r in judged if not r["met"]]
    print(
        f"\n{len(judged) - len(missed)} of {len(judged)} targets met"
        + (f"; missed: {', '.join(missed)}" if missed else "")
        + f"  ({total_s:.0f} s)"
    )
    results = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python bench/run.py"
        + (" --quick" if args.quick else "")
        + (f" --only {','.join(args.only)}" if args.only else ""),
        "quick": args.quick,
        "machine": {
            **_machine(),
            "loadavg_before": load_before,
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
        "seconds": {**{k: round(v, 1) for k, v in seconds.items()}, "total": round(total_s, 1)},
        "targets_met": len(judged) - len(missed),
        "targets": len(judged),
        "missed": missed,
        "rows": rows,
        "figures": figures,
    }
    if args.out is None and args.only:  # some areas alone never replace the whole run's figures
        print(
            f"not written: --only ran some areas (give --out to keep them; {BENCH / 'results.json'} is the whole run's)"
        )
        return 0
    out = args.out or BENCH / "results.json"
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
