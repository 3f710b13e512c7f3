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


def _billed_body(**settings) -> dict:
    """A request of about 600 tokens of system and 600 of messages, each marked."""
    return {
        "model": "claude-sonnet-5-5",
        "system": [{"type": "text", "text": "s" * 2400, "cache_control": CACHE}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "m" * 2400, "cache_control": CACHE}],
            }
        ],
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
        **settings,
    }


def test_the_cache_model_invalidates_each_level_as_the_prompt_caching_page_says():
    """tool_choice keys only the message blocks; the output format (a system
    prompt of its own) keys the system and the messages."""
    cache = model_traffic.CacheModel()
    first = cache.bill(_billed_body())
    body = _billed_body()
    system_tokens = model_traffic._tokens(body["system"][0]) + model_traffic._tokens(
        {"type": "output_format", **body["output_config"]["format"]}
    )  # the system text and the output format's own system prompt

    other_tool_choice = cache.bill(_billed_body(tool_choice={"type": "none"}))
    other_format = cache.bill(_billed_body(output_config={"format": {"type": "json_schema"}}))

    assert first["cache_read"] == 0 and first["cache_write"] > 1024
    assert other_tool_choice["cache_read"] == system_tokens  # the system is read back
    assert other_tool_choice["cache_write"] == first["cache_write"] - system_tokens
    assert other_format["cache_read"] == 0  # nothing after the tools is shared


def test_a_cache_read_is_billed_at_the_requests_models_own_rate():
    """Sonnet 5.5 reads at 0.05x the input price (the price table's row, as
    the pricing page says), Sonnet 5 at 0.1x: the same two requests, the
    second reading what the first wrote, bill differently."""
    from types import SimpleNamespace

    def billed(model: str) -> dict:
        body = _billed_body(model=model)
        api = SimpleNamespace(
            requests=[SimpleNamespace(body=body), SimpleNamespace(body=body)],
            served=[{"content": []}, {"content": []}],
        )
        events = [{"event": "llm_call", "node": "orient"}] * 2
        return model_traffic.billed_by_node(api, events)["total"]

    for model, read_rate in (("claude-sonnet-5-5", 0.05), ("claude-sonnet-5", 0.1)):
        total = billed(model)
        assert total["cache_read"] > 0
        expected = total["input"] + 1.25 * total["cache_write"] + read_rate * total["cache_read"]
        assert total["billed_equivalent"] == round(expected), model


def test_the_output_format_is_billed_as_the_system_prompt_it_is_sent_as():
    """The structured-output page: the format reaches the model as a system
    prompt of its own, billed like any other; a larger schema is more input
    sent, cached with the system it precedes."""
    schema = {"type": "object", "properties": {f"field_{n}": {"type": "string"} for n in range(80)}}
    small, large = (
        model_traffic.CacheModel().bill(
            _billed_body(output_config={"format": {"type": "json_schema", "schema": value}})
        )
        for value in ({"type": "object"}, schema)
    )
    grown = model_traffic._tokens(schema) - model_traffic._tokens({"type": "object"})
    assert abs(large["cache_write"] - small["cache_write"] - grown) <= 1  # rounding
    assert small["input"] == large["input"] == 0
