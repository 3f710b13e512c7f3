"""The Anthropic engine, with the real SDK talking to a loopback Messages API."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import BaseModel

from stepkit.config import Config
from stepkit.pluginmanager import StepkitPluginManager
from stepkit.plugins.llm.anthropic_engine import DEFAULT_MODEL, check_history
from stepkit.plugins.llm.engine import make_engine
from stepkit.plugins.llm.tools import read_only_tools
from stepkit.records import StageContext, StageFault, Usage
from stepkit.workspace.store import store_dir

pytest_plugins = ["tests.support.messages_api"]

FAST = {"llm_max_retry_wait_s": 2, "llm_timeout_s": 10}


class Answer(BaseModel):
    plan_summary: str
    has_major_deviation: bool


GOOD = {"plan_summary": "adds slugify", "has_major_deviation": False}


def make_ctx(
    tmp_path: Path,
    settings: dict | None = None,
    config: Config | None = None,
    usage: Usage | None = None,
) -> StageContext:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True, exist_ok=True)
    (project / "src" / "a.py").write_text("def slugify(text):\n    return text\n")
    run_dir = store_dir(project) / "runs" / "r1"
    run_dir.mkdir(parents=True, exist_ok=True)
    events = run_dir / "events.jsonl"

    def emit(kind: str, **fields) -> None:
        # written raw on purpose: the engine alone must keep secrets out of events
        with events.open("a") as fh:
            fh.write(json.dumps({"kind": kind, **fields}) + "\n")

    return StageContext(
        node="orient",
        project_dir=project,
        plans_dir=project / "plans",
        state={},
        settings={**FAST, **(settings or {})},
        config=config or Config(),
        pm=StepkitPluginManager(),
        run_dir=run_dir,
        emit=emit,
        usage=usage or Usage(),
    )


def events(ctx: StageContext, kind: str) -> list[dict]:
    lines = (ctx.run_dir / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["kind"] == kind]


def ask(
    ctx: StageContext,
    prompt: str = "Orient for step 1.",
    tools: bool = True,
    prefix: str | None = "# Step 1 plan\nAdd slugify.",
    spec: str | None = None,
) -> Answer:
    engine = make_engine(spec, ctx)
    return engine.structured(
        node=ctx.node,
        system="You orient.",
        prefix=prefix,
        prompt=prompt,
        schema=Answer,
        tools=read_only_tools(ctx.project_dir) if tools else None,
        ctx=ctx,
    )


@pytest.mark.slow
def test_structured_answer_through_the_tool_loop(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    messages_api.reply_tool("read_file", {"path": "src/a.py"})
    messages_api.reply_json(GOOD)

    answer = ask(ctx)

    assert answer == Answer(**GOOD)
    assert len(messages_api.requests) == 2
    first, second = (r.body for r in messages_api.requests)
    assert first["model"] == DEFAULT_MODEL
    assert first["output_config"]["format"]["type"] == "json_schema"
    assert set(first["output_config"]["format"]["schema"]["properties"]) == set(GOOD)
    [result] = messages_api.tool_results()
    assert "def slugify(text):" in result["content"] and "is_error" not in result
    assert second["messages"][1]["content"][0]["type"] == "tool_use"
    calls = events(ctx, "llm_call")
    assert [c["call"] for c in calls] == [1, 2]
    assert ctx.usage.input_tokens == 200 and ctx.usage.output_tokens == 40
    assert ctx.usage.cost_usd > 0 and calls[0]["cost_usd"] > 0


def test_the_nodes_of_a_run_share_one_client(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    for _ in range(3):
        messages_api.reply_json(GOOD)

    ask(ctx)
    ask(replace(ctx, node="edge_case_sweep"))
    ask(replace(ctx, run_dir=ctx.run_dir.parent / "r2"))

    first, second, other_run = (r.peer for r in messages_api.requests)
    assert first == second  # the second node reused the run's connection
    assert other_run != first


def test_outside_a_run_the_calls_of_one_context_share_one_client(tmp_path, messages_api):
    ctx = replace(make_ctx(tmp_path), run_dir=None, adhoc_dir=tmp_path / "adhoc")
    for _ in range(3):
        messages_api.reply_json(GOOD)

    ask(ctx)
    ask(ctx)
    ask(replace(ctx, engines={}))

    first, second, other_command = (r.peer for r in messages_api.requests)
    assert first == second  # `stepkit plan` asking once more reuses its connection
    assert other_command != first


LONG_PLAN = "# Step 1 plan\n" + "".join(
    f"- task {n}: add slugify case {n} with its test\n" for n in range(400)
)


def test_cache_markers_only_on_prefixes_long_enough_to_be_cached(tmp_path, messages_api):
    # claude-sonnet-5's minimum is 1,024 tokens: more than the read-only tools' ~700
    ctx = make_ctx(tmp_path, settings={"model_orient": "claude-sonnet-5"})
    messages_api.reply_json(GOOD)
    messages_api.reply_json(GOOD)

    ask(ctx)  # a short plan: tools + system + plan are under the 1,024-token minimum
    ask(ctx, prefix=LONG_PLAN)

    short, long = (r.body for r in messages_api.requests)
    assert [t["name"] for t in short["tools"]] == ["read_file", "list_dir", "search", "run_command"]
    assert "cache_control" not in short["system"][0]
    assert all("cache_control" not in t for t in short["tools"])  # tools alone are too short
    assert all("cache_control" not in b for b in short["messages"][0]["content"])
    assert short["cache_control"] == {"type": "ephemeral"}  # the tool loop's growing history
    prefix_block, prompt_block = long["messages"][0]["content"]
    assert prefix_block["text"].startswith("# Step 1 plan")
    assert prefix_block["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in prompt_block


@pytest.mark.parametrize(
    "model, marked",
    [
        ("claude-sonnet-5-5", True),  # the minimum is 512 tokens
        ("claude-haiku-5-5", True),  # 512 too, unlike Haiku 4.5's 4,096
        ("claude-opus-5-5", True),
        ("claude-fable-5-1", True),
        ("claude-sonnet-5", False),  # 1,024
        ("claude-haiku-4-5", False),  # 4,096
    ],
)
def test_the_read_only_tools_are_cached_where_they_reach_the_models_minimum(
    tmp_path, messages_api, model, marked
):
    """The read-only tool definitions (about 700 tokens) are the one prefix
    every reading node shares: cached where the model's minimum cacheable
    length (Anthropic's prompt-caching page, "Cache limitations") allows."""
    messages_api.reply_json(GOOD)

    ask(make_ctx(tmp_path, settings={"model_orient": model}))

    tools = messages_api.requests[0].body["tools"]
    assert ("cache_control" in tools[-1]) is marked
    assert all("cache_control" not in tool for tool in tools[:-1])


def test_a_single_request_without_tools_caches_nothing(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    messages_api.reply_json(GOOD)

    ask(ctx, tools=False, prefix=LONG_PLAN)

    body = messages_api.requests[0].body
    assert "cache_control" not in body and "cache_control" not in json.dumps(body["messages"])


def test_a_long_tool_loop_keeps_its_cache_within_four_breakpoints(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    for batch in range(3):  # 12 parallel calls a turn: 24 new blocks, past the 20-block lookback
        messages_api.reply(
            [
                {
                    "type": "tool_use",
                    "id": f"toolu_{batch}_{n}",
                    "name": "list_dir",
                    "input": {"path": "."},
                }
                for n in range(12)
            ],
            stop_reason="tool_use",
        )
    messages_api.reply_json(GOOD)

    ask(ctx, prefix=LONG_PLAN)

    for request in messages_api.requests:
        text = json.dumps(request.body)
        assert text.count('"cache_control"') <= 4
    last = messages_api.requests[-1].body
    marked = [
        i
        for i, block in enumerate(b for m in last["messages"] for b in m["content"])
        if "cache_control" in block
    ]
    blocks_before_last_turn = 1 + 2 * (12 * 2) + 1  # the first message, 2 turns, the 3rd's calls
    assert marked == [0, blocks_before_last_turn - 1]  # the plan, and where the last request ended


def _blocks_in_cache_order(body: dict) -> list[dict]:
    """Tools, system blocks and message blocks: the order a cached prefix is read in."""
    return [
        *body.get("tools", []),
        *body["system"],
        *(b for m in body["messages"] for b in m["content"]),
    ]


@pytest.mark.parametrize("calls_per_turn", [1, 12])
def test_each_turn_reads_the_whole_previous_request_from_the_cache(
    tmp_path, messages_api, calls_per_turn
):
    """A turn's request starts with the previous request, block for block, and
    one of its breakpoints is at most 19 blocks after the previous request's
    end, where the API looks for it: the previous turn is read, never written again."""
    ctx = make_ctx(tmp_path, settings={"model_orient": "claude-sonnet-5-5"})
    big = tmp_path / "project" / "src" / "tables.py"
    big.write_text("".join(f"TABLE_{n} = {{'key': {n}}}\n" for n in range(600)))
    for turn in range(3):
        messages_api.reply(
            [
                {"type": "thinking", "thinking": f"turn {turn}: read on", "signature": "c2ln"},
                *(
                    {
                        "type": "tool_use",
                        "id": f"toolu_{turn}_{n}",
                        "name": "read_file",
                        "input": {"path": "src/tables.py" if turn == 0 else "src/a.py"},
                    }
                    for n in range(calls_per_turn)
                ),
            ],
            stop_reason="tool_use",
        )
    messages_api.reply_json(GOOD)

    ask(ctx, prefix=LONG_PLAN)

    bodies = [r.body for r in messages_api.requests]
    for before, after in itertools.pairwise(bodies):
        assert after["cache_control"] == {"type": "ephemeral"}  # the end of each request
        previous = _blocks_in_cache_order(before)
        blocks = _blocks_in_cache_order(after)
        unmarked = [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]
        assert unmarked[: len(previous)] == [
            {k: v for k, v in b.items() if k != "cache_control"} for b in previous
        ]
        breakpoints = [i for i, b in enumerate(blocks) if "cache_control" in b]
        breakpoints.append(len(blocks) - 1)  # the request-level marker's block
        end = len(previous) - 1
        assert any(end <= mark <= end + 19 for mark in breakpoints), (end, breakpoints)


def test_529_then_success_waits_retry_after(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    messages_api.error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0.3"})
    messages_api.reply_json(GOOD)

    assert ask(ctx) == Answer(**GOOD)

    first, second = messages_api.requests
    assert second.at - first.at >= 0.3
    [retry] = events(ctx, "llm_retry")
    assert retry["attempt"] == 1 and retry["wait_s"] == 0.3 and "529" in retry["error"]
    assert events(ctx, "llm_call")[0]["attempts"] == 2


def test_retry_after_is_capped(tmp_path, messages_api):
    ctx = make_ctx(tmp_path, {"llm_max_retry_wait_s": 0.2})
    messages_api.error(429, "rate_limit_error", headers={"retry-after": "3600"})
    messages_api.reply_json(GOOD)

    assert ask(ctx) == Answer(**GOOD)
    assert events(ctx, "llm_retry")[0]["wait_s"] == 0.2


def test_a_timed_out_request_is_retried(tmp_path, messages_api):
    ctx = make_ctx(tmp_path, {"llm_timeout_s": 0.2})
    messages_api.reply_json(GOOD, delay_s=1.0)
    messages_api.reply_json(GOOD)

    assert ask(ctx) == Answer(**GOOD)

    [retry] = events(ctx, "llm_retry")
    assert retry["error"] == "request timed out"
    assert len(messages_api.requests) == 2


def test_529_forever_is_a_fault_with_a_clear_note(tmp_path, messages_api):
    ctx = make_ctx(tmp_path, {"llm_max_retries": 2})
    messages_api.error(
        529, "overloaded_error", "Overloaded", headers={"retry-after": "0.05"}, always=True
    )

    with pytest.raises(StageFault) as info:
        ask(ctx)

    note = info.value.note
    assert len(messages_api.requests) == 3
    for needle in ("orient", "3 attempt", "HTTP 529", "overloaded_error", "Overloaded"):
        assert needle in note
    assert "Traceback" not in note and "\n" not in note
    assert messages_api.api_key not in note
    assert ctx.usage == Usage()


def test_client_errors_are_not_retried(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    messages_api.error(401, "authentication_error", "invalid x-api-key")

    with pytest.raises(StageFault) as info:
        ask(ctx)

    assert len(messages_api.requests) == 1
    assert "1 attempt" in info.value.note and "HTTP 401 authentication_error" in info.value.note


def test_malformed_json_is_retried_once_with_the_error(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    messages_api.reply_text('{"plan_summary": "x", "has_major_')
    messages_api.reply_json(GOOD)

    assert ask(ctx) == Answer(**GOOD)

    correction = messages_api.requests[1].body["messages"][-1]["content"][0]["text"]
    assert "not accepted" in correction and "Invalid JSON" in correction


def test_invalid_answer_twice_is_a_fault(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    messages_api.reply_text("not json at all")
    messages_api.reply_json({"plan_summary": "x"})

    with pytest.raises(StageFault) as info:
        ask(ctx)

    assert len(messages_api.requests) == 2
    assert "invalid twice" in info.value.note and "has_major_deviation" in info.value.note


def test_tool_call_cut_at_max_tokens_is_not_executed(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    tool_id = messages_api.reply_tool(
        "run_command", {"command": "touch pwned"}, stop_reason="max_tokens"
    )
    messages_api.reply_json(GOOD)

    assert ask(ctx) == Answer(**GOOD)

    assert not (ctx.project_dir / "pwned").exists()
    [result] = messages_api.tool_results()
    assert result["tool_use_id"] == tool_id and result["is_error"] is True
    assert "not executed" in result["content"]
    assert events(ctx, "llm_tool") == []


def test_reading_outside_the_project_is_a_tool_error(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    messages_api.reply_tool("read_file", {"path": "../../etc/passwd"})
    messages_api.reply_json(GOOD)

    assert ask(ctx) == Answer(**GOOD)

    [result] = messages_api.tool_results()
    assert result["is_error"] is True and "outside the project" in result["content"]
    assert b"root:" not in messages_api.requests[1].raw


def test_unknown_tool_is_a_tool_error(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    messages_api.reply_tool("write_file", {"path": "x", "content": "y"})
    messages_api.reply_json(GOOD)

    assert ask(ctx) == Answer(**GOOD)
    [result] = messages_api.tool_results()
    assert result["is_error"] is True and "no tool named 'write_file'" in result["content"]
    assert not (ctx.project_dir / "x").exists()


def test_secrets_are_masked_in_requests_and_run_files(tmp_path, messages_api):
    secret = "sk-ant-api03-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz"
    ctx = make_ctx(tmp_path)
    (ctx.project_dir / "settings.env").write_text(f"API_KEY={secret}\nDEBUG=1\n")
    (ctx.project_dir / "run.log").write_text(f"using key {messages_api.api_key}\n")
    messages_api.reply_tool("read_file", {"path": "settings.env"})
    messages_api.reply_tool("run_command", {"command": "cat run.log; echo $ANTHROPIC_API_KEY"})
    messages_api.error(500, "api_error", f"echo {secret}", headers={"retry-after": "0"})
    messages_api.reply_json({"plan_summary": f"found {secret}", "has_major_deviation": False})

    answer = ask(ctx, prompt=f"The previous handoff says: token={secret}")

    assert "DEBUG=1" in messages_api.tool_results(1)[0]["content"]
    for request in messages_api.requests:
        assert secret.encode() not in request.raw
        assert messages_api.api_key.encode() not in request.raw
    for path in store_dir(ctx.project_dir).rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert secret not in text and messages_api.api_key not in text, path
    assert answer.plan_summary == "found [REDACTED]"


def test_budget_exceeded_before_the_call(tmp_path, messages_api):
    ctx = make_ctx(tmp_path, {"max_cost_usd": "0.01"}, usage=Usage(cost_usd=0.02))

    with pytest.raises(StageFault) as info:
        ask(ctx)

    assert messages_api.requests == []
    assert info.value.note.startswith("LLM fault in node orient")
    assert "budget exceeded" in info.value.note and "max_cost_usd=0.01" in info.value.note


def test_token_budget_stops_the_tool_loop_before_the_next_call(tmp_path, messages_api):
    ctx = make_ctx(tmp_path, {"max_tokens": 1500})
    messages_api.reply_tool(
        "list_dir", {"path": "."}, usage={"input_tokens": 1000, "output_tokens": 200}
    )

    with pytest.raises(StageFault) as info:
        ask(ctx)

    assert len(messages_api.requests) == 1
    assert "budget exceeded" in info.value.note and "max_tokens=1500" in info.value.note


def test_model_per_node(tmp_path, messages_api):
    config = Config(models={"orient": "claude-haiku-4-5", "default": "claude-opus-5-5"})
    messages_api.reply_json(GOOD)
    messages_api.reply_json(GOOD)
    messages_api.reply_json(GOOD)

    ask(make_ctx(tmp_path, {"model_orient": "claude-opus-4-8"}, config), spec="anthropic:x")
    ask(make_ctx(tmp_path, config=config), spec="anthropic:claude-sonnet-5")
    ask(make_ctx(tmp_path, config=Config(models={"default": "claude-opus-5-5"})))

    models = [r.body["model"] for r in messages_api.requests]
    assert models == ["claude-opus-4-8", "claude-haiku-4-5", "claude-opus-5-5"]


def test_when_the_turns_run_out_the_model_is_asked_to_answer_without_tools(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    for _ in range(3):
        messages_api.reply_tool("list_dir", {"path": "."})
    messages_api.reply_json(GOOD)
    engine = make_engine(None, ctx)

    answer = engine.structured(
        node="orient",
        system="s",
        prompt="p",
        schema=Answer,
        tools=read_only_tools(ctx.project_dir),
        ctx=ctx,
        max_turns=3,
    )

    assert answer == Answer(**GOOD)
    *loop, final = (r.body for r in messages_api.requests)
    assert len(loop) == 3 and all("tool_choice" not in body for body in loop)
    assert final["tool_choice"] == {"type": "none"}
    last = final["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and "Answer now, without tools" in last[-1]["text"]
    assert events(ctx, "llm_final_turn")[0]["turns"] == 3
    # its reply cannot call a tool, so nothing reads its end: no tail is written,
    # and the end of the previous request, where the history was cached, is read
    assert "cache_control" not in final and all("cache_control" in body for body in loop)
    blocks = [b for m in final["messages"] for b in m["content"]]
    previous_end = sum(len(m["content"]) for m in loop[-1]["messages"]) - 1
    assert [i for i, b in enumerate(blocks) if "cache_control" in b] == [previous_end]


def test_a_call_whose_tools_are_all_refused_reads_the_shared_prefix_and_writes_no_tail(
    tmp_path, messages_api
):
    """A node that may not use the tools it is sent (so it shares the other
    nodes' cached prefix) marks the prefix, whose cache it reads, not its
    end: no later request of its own reads it.  A call to a refused tool
    is answered with the reason and never runs."""
    ctx = make_ctx(tmp_path)
    messages_api.reply_tool("run_command", {"command": "touch ran"})
    messages_api.reply_json(GOOD)
    refused = [replace(t, refused="not for this node") for t in read_only_tools(ctx.project_dir)]

    answer = make_engine(None, ctx).structured(
        node="write_handoff",
        system="s",
        prefix=LONG_PLAN,
        prompt="p",
        schema=Answer,
        tools=refused,
        ctx=ctx,
    )

    assert answer == Answer(**GOOD)
    first, second = (r.body for r in messages_api.requests)
    sent = [{k: v for k, v in t.items() if k != "cache_control"} for t in first["tools"]]
    assert sent == [t.to_param() for t in read_only_tools(ctx.project_dir)]  # the same definitions
    assert first["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in first and "cache_control" not in second
    [result] = messages_api.tool_results()
    assert result["is_error"] is True and "not for this node" in result["content"]
    assert not (tmp_path / "project" / "ran").exists()


def test_a_tool_call_in_the_final_turn_is_a_fault_with_a_clear_note(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    for _ in range(4):
        messages_api.reply_tool("list_dir", {"path": "."})
    engine = make_engine(None, ctx)

    with pytest.raises(StageFault) as info:
        engine.structured(
            node="orient",
            system="s",
            prompt="p",
            schema=Answer,
            tools=read_only_tools(ctx.project_dir),
            ctx=ctx,
            max_turns=3,
        )

    assert "no answer after 3 model turns and a final turn without tools" in info.value.note


def test_a_thread_keeps_the_conversation_across_calls(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    messages_api.reply_tool("read_file", {"path": "src/a.py"})
    messages_api.reply_json(GOOD)
    messages_api.reply_json(GOOD)
    engine = make_engine(None, ctx)
    thread = engine.new_thread()

    for prompt in ("first task", "second task"):
        engine.structured(
            node="coder_edit",
            system="s",
            prefix="the plan",
            prompt=prompt,
            schema=Answer,
            tools=read_only_tools(ctx.project_dir),
            ctx=ctx,
            thread=thread,
        )

    second = messages_api.requests[-1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user", "assistant", "user"]
    assert second[0]["content"][0]["text"] == "the plan"
    assert "def slugify" in second[2]["content"][0]["content"]
    assert second[-1]["content"] == [{"type": "text", "text": "second task"}]
    assert len(thread.messages) == 6


def test_old_tool_results_are_trimmed_to_the_context_budget(tmp_path, messages_api):
    ctx = make_ctx(tmp_path, settings={"llm_context_budget_tokens": 3000})
    (ctx.project_dir / "src" / "big.py").write_text("".join(f"row_{n} = {n}\n" for n in range(300)))
    for _ in range(4):
        messages_api.reply_tool("read_file", {"path": "src/big.py"})
    messages_api.reply_json(GOOD)

    ask(ctx)

    results = [
        b
        for m in messages_api.requests[-1].body["messages"]
        if m["role"] == "user"
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert [r["content"].startswith("[tool result trimmed") for r in results] == [
        True,
        True,
        False,
        False,
    ]
    assert "row_299 = 299" in results[-1]["content"]
    assert events(ctx, "llm_trimmed")


@pytest.mark.parametrize(
    "model, settings, effort",
    [
        ("claude-opus-5-5", {}, "high"),  # orient's default
        ("claude-opus-5-5", {"effort_orient": "low"}, "low"),
        ("claude-haiku-4-5", {"effort_orient": "max"}, None),  # no effort on this model
    ],
)
def test_effort_and_thinking_per_node(tmp_path, messages_api, model, settings, effort):
    ctx = make_ctx(tmp_path, settings={"model_orient": model, **settings})
    messages_api.reply_json(GOOD)

    ask(ctx)

    body = messages_api.requests[0].body
    assert body["output_config"].get("effort") == effort
    assert body.get("thinking") == ({"type": "adaptive"} if effort else None)


def test_a_node_without_a_default_effort_sends_none(tmp_path, messages_api):
    ctx = replace(
        make_ctx(tmp_path, settings={"model_write_handoff": "claude-opus-5-5"}),
        node="write_handoff",
    )
    messages_api.reply_json(GOOD)
    ask(ctx, tools=False)
    assert "effort" not in messages_api.requests[0].body["output_config"]


@pytest.mark.parametrize(
    "messages, problem",
    [
        (
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}]},
            ],
            "no tool_result",
        ),
        (
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1"},
                        {"type": "tool_result", "tool_use_id": "t1"},
                    ],
                },
            ],
            "message 2",
        ),
        (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9"}]}],
            "message 0",
        ),
        (
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
            ],
            "no tool_result",
        ),
    ],
)
def test_history_invariant(messages, problem):
    with pytest.raises(StageFault) as info:
        check_history(messages, "orient")
    assert "history invariant broken" in info.value.note and problem in info.value.note


def test_history_invariant_accepts_a_well_formed_loop():
    check_history(
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1"}, {"type": "tool_use", "id": "t2"}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t2"},
                    {"type": "tool_result", "tool_use_id": "t1"},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "{}"}]},
        ],
        "orient",
    )


def test_unknown_engine_is_a_usage_error(tmp_path):
    from stepkit.errors import UsageError

    with pytest.raises(UsageError, match="unknown engine 'nosuch:gpt'"):
        make_engine("nosuch:gpt", make_ctx(tmp_path))


def test_a_model_pages_through_a_5000_line_file_to_its_end(tmp_path, messages_api):
    ctx = make_ctx(tmp_path)
    (ctx.project_dir / "src" / "long.py").write_text(
        "".join(f"n{i} = {i}\n" for i in range(1, 5001))
    )
    offsets = list(range(1, 5001, 400))  # short lines: each window is 400 whole lines
    for offset in offsets:
        messages_api.reply_tool("read_file", {"path": "src/long.py", "offset": offset})
    messages_api.reply_json(GOOD)

    ask(ctx)

    results = [messages_api.tool_results(i)[0]["content"] for i in range(1, len(offsets) + 1)]
    footers = [text.splitlines()[-1] for text in results]
    assert footers[0] == "[lines 1–400 of 5,000; continue with offset=401]"
    assert all(
        f"continue with offset={offset}]" in footer
        for footer, offset in zip(footers, offsets[1:], strict=False)
    )
    assert footers[-1] == "[lines 4,801–5,000 of 5,000; end of file]"
    assert "  5000\tn5000 = 5000" in results[-1]
    seen = [line for text in results for line in text.splitlines()[:-1]]
    assert len(seen) == 5000


def test_a_model_that_refuses_the_effort_settings_is_asked_again_without_them(
    tmp_path, messages_api
):
    ctx = make_ctx(tmp_path, settings={"model_orient": "claude-opus-5-5"})
    messages_api.error(400, "invalid_request_error", "thinking.type: adaptive is not supported")
    messages_api.reply_json(GOOD)

    assert ask(ctx) == Answer(**GOOD)

    refused, accepted = (r.body for r in messages_api.requests)
    assert (
        refused["thinking"] == {"type": "adaptive"} and refused["output_config"]["effort"] == "high"
    )
    assert "thinking" not in accepted and "effort" not in accepted["output_config"]
    assert events(ctx, "llm_effort_dropped")


def test_other_client_errors_still_fail_at_once_with_effort_set(tmp_path, messages_api):
    ctx = make_ctx(tmp_path, settings={"model_orient": "claude-opus-5-5"})
    messages_api.error(400, "invalid_request_error", "messages: roles must alternate")

    with pytest.raises(StageFault) as info:
        ask(ctx)
    assert "roles must alternate" in info.value.note and len(messages_api.requests) == 1
