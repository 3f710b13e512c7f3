"""The arithmetic of the benchmark figures (bench/): what counts as the
cached prefix of a request, the time inside the graph, the table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import full_run
import model_traffic
import run as bench_run

CACHE = {"type": "ephemeral"}


def compact(value) -> int:
    return len(json.dumps(value, separators=(",", ":")).encode())


def test_the_prefix_runs_through_the_last_marked_block_in_tools_system_messages_order():
    tools = [
        {"name": "a", "input_schema": {}},
        {"name": "b", "input_schema": {}, "cache_control": CACHE},
    ]
    system = [{"type": "text", "text": "rules", "cache_control": CACHE}]
    plan = {"type": "text", "text": "the plan", "cache_control": CACHE}
    task = {"type": "text", "text": "do it"}
    later = {"type": "tool_result", "tool_use_id": "t1", "content": "x" * 50}
    body = {
        "model": "m",
        "tools": tools,
        "system": system,
        "cache_control": CACHE,
        "messages": [
            {"role": "user", "content": [plan, task]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}]},
            {"role": "user", "content": [later]},
        ],
    }

    figures = model_traffic.request_figures(body)

    assert figures["bytes"] == compact(body)
    assert figures["prefix_bytes"] == sum(map(compact, [*tools, *system, plan]))
    assert figures["marked_block_bytes"] == sum(map(compact, [tools[1], *system, plan]))
    assert figures["content_bytes"] == len("rules") + len("the plan") + len("do it")


def test_no_marker_means_no_prefix():
    body = {"messages": [{"role": "user", "content": "hello"}]}
    assert model_traffic.request_figures(body)["prefix_bytes"] == 0


def test_time_in_the_graph_adds_the_run_and_the_resume_but_not_the_pause():
    events = [
        {"event": "run_started", "t": 10.0},
        {"event": "node_started", "t": 10.5},
        {"event": "paused", "t": 11.0},
        {"event": "run_resumed", "t": 50.0},
        {"event": "run_finished", "t": 50.25},
    ]
    assert full_run._in_graph_seconds(events) == 1.25


def test_the_table_marks_missed_targets_and_lines_up():
    rows = [
        bench_run.row("3 overhead per node", "52.0 ms", "1.2 ms", 43.3, "< 5 ms", False),
        bench_run.row("5 evidence", "1,332 B", "162,343 B raw", 0.0082, "< 5 %", True),
        bench_run.row("6 bytes", "6,015 B"),
    ]
    lines = bench_run.render(rows).splitlines()
    assert lines[0].split() == ["figure", "value", "baseline", "ratio", "target", "met?"]
    assert lines[2].endswith("NO") and lines[3].endswith("yes") and lines[4].endswith("—")
    start = lines[0].index("value")
    assert all(line[start - 2 : start] == "  " and line[start] != " " for line in lines[2:])
