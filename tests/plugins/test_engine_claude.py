"""``--engine claude``: headless Claude Code, tested against a stand-in CLI
that replays JSON recorded from the real one (Claude Code 2.1.332, the
claude preset's checked version, against a loopback Messages API;
tests/support/recorded/claude_*.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from stepkit.pluginmanager import get_plugin_manager
from stepkit.plugins.llm.engine import check_engine_spec, make_engine
from stepkit.plugins.llm.tools import coder_tools, read_only_tools
from stepkit.records import StageContext, StageFault, Usage
from tests.support import fake_cli


class Answer(BaseModel):
    plan_summary: str
    has_major_deviation: bool


GOOD = {"plan_summary": "Add calc.mul next to add.", "has_major_deviation": False}


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """The stand-in ``claude`` first on PATH; returns its state dir."""
    state = tmp_path / "claude-state"
    fake_cli.install(tmp_path / "bin", "claude", state)
    monkeypatch.setenv("PATH", fake_cli.path_with(tmp_path / "bin"))
    return state


def success(answer: dict) -> dict:
    """The recorded success with this structured answer."""
    result = fake_cli.recorded("claude_success.json")[0]
    return {**result, "structured_output": answer, "result": json.dumps(answer)}


def make_ctx(
    tmp_path: Path, settings: dict | None = None, usage: Usage | None = None
) -> StageContext:
    return fake_cli.stage_context(tmp_path, "claude", settings, usage)


def ask(
    ctx: StageContext, tools: str = "read", spec: str | None = None, node: str = "orient"
) -> Answer:
    tool_list = {
        "read": read_only_tools(ctx.project_dir),
        "write": coder_tools(ctx.project_dir),
        "none": None,
    }[tools]
    return make_engine(spec, ctx).structured(
        node=node,
        system="You orient.",
        prefix="# Step 1 plan",
        prompt="Orient now.",
        schema=Answer,
        tools=tool_list,
        ctx=ctx,
        max_turns=7,
    )


def test_write_tools_whose_handler_refuses_leave_the_node_read_only(tmp_path, cli):
    """A coder that plans with its write tools refusing (one set of tool
    definitions for every round) must not hand Claude Code its writers."""
    from dataclasses import replace

    fake_cli.script(cli, {"lines": [success(GOOD)]})
    ctx = make_ctx(tmp_path)

    def refuse(args):
        raise ValueError("not while planning")

    planning = [
        replace(t, handler=refuse) if t.name in ("write_file", "edit_file") else t
        for t in coder_tools(ctx.project_dir)
    ]
    make_engine(None, ctx).structured(
        node="coder_plan",
        system="Plan.",
        prompt="Plan now.",
        schema=Answer,
        tools=planning,
        ctx=ctx,
    )
    argv = fake_cli.calls(cli)[0]["argv"]
    assert (
        option(argv, "--tools") == "Read,Grep,Glob" and option(argv, "--permission-mode") == "plan"
    )


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_a_read_only_node_gets_read_grep_glob_in_plan_mode_and_the_answer_is_structured_output(
    tmp_path, cli
):
    fake_cli.script(cli, {"lines": [success(GOOD)]})
    ctx = make_ctx(tmp_path)
    assert ask(ctx) == Answer(**GOOD)

    (call,) = fake_cli.calls(cli)
    argv = call["argv"]
    assert argv[:4] == ["-p", "--output-format", "json", "--json-schema"]
    assert json.loads(option(argv, "--json-schema"))["properties"].keys() == {
        "plan_summary",
        "has_major_deviation",
    }
    assert option(argv, "--tools") == "Read,Grep,Glob" == option(argv, "--allowedTools")
    assert option(argv, "--permission-mode") == "plan"
    assert option(argv, "--max-turns") == "7"
    assert "You orient." in option(argv, "--append-system-prompt")
    assert (
        "--strict-mcp-config" in argv
    )  # never the user's MCP servers (stepkit mcp itself among them)
    assert "--model" not in argv  # no model named: the CLI's own default, never an API model id
    assert call["stdin"] == "# Step 1 plan\n\nOrient now."
    assert call["cwd"] == str(ctx.project_dir)


def test_usage_and_cost_come_from_the_result_and_the_event_says_who_pays(
    tmp_path, cli, monkeypatch
):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fake_cli.script(cli, {"lines": [success(GOOD)]})
    ctx = make_ctx(tmp_path, usage=Usage(input_tokens=5, cost_usd=0.01))
    ask(ctx)
    assert ctx.usage == Usage(
        input_tokens=2405,
        output_tokens=160,
        cache_read_tokens=600,
        cache_write_tokens=0,
        cost_usd=0.01978,
    )
    (event,) = fake_cli.events(ctx)
    assert event["engine"] == "claude" and event["cost_usd"] == 0.00978
    assert event["model"] == "claude-sonnet-4-5"  # the model the CLI reports it used
    assert event["billed_to"] == "subscription"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    ask(ctx)
    assert fake_cli.events(ctx)[-1]["billed_to"] == "api"  # Claude Code bills the API then


def test_a_writing_node_gets_edit_write_bash_and_accept_edits_a_node_without_tools_none(
    tmp_path, cli
):
    fake_cli.script(cli, {"lines": [success(GOOD)]})
    ctx = make_ctx(tmp_path, settings={"model_coder_edit": "opus"})
    ask(ctx, tools="write", node="coder_edit")
    ask(ctx, tools="none", spec="claude:haiku")
    writing, bare = (c["argv"] for c in fake_cli.calls(cli))
    logs = sorted(p.name for p in (ctx.run_dir / "logs").iterdir())
    assert logs == ["llm-coder_edit-claude-1.log", "llm-orient-claude-1.log"]
    ask(ctx, tools="none")
    assert (
        ctx.run_dir / "logs" / "llm-orient-claude-2.log"
    ).is_file()  # the first call's log is kept
    assert option(writing, "--tools") == "Read,Grep,Glob,Edit,Write,Bash"
    assert option(writing, "--permission-mode") == "acceptEdits"
    assert option(writing, "--model") == "opus"  # --set model_<node> wins
    assert option(bare, "--tools") == "" and option(bare, "--model") == "haiku"


@pytest.mark.parametrize(
    "fixture, words",
    [
        ("claude_max_turns.json", "stopped at its turn limit: Reached maximum number of turns (2)"),
        ("claude_api_error.json", "reported an API error 400: Prompt is too long"),
        ("claude_no_structured_output.json", "answered without the structured output: hello"),
    ],
)
def test_cli_errors_are_llm_faults_in_the_clis_own_words_and_never_retried(
    tmp_path, cli, fixture, words
):
    fake_cli.script(
        cli,
        {
            "lines": fake_cli.recorded(fixture),
            "exit": 1 if "error" in fixture or "turns" in fixture else 0,
        },
    )
    ctx = make_ctx(tmp_path)
    with pytest.raises(StageFault) as fault:
        ask(ctx)
    assert fault.value.note.startswith("LLM fault in node orient (claude CLI): ")
    assert words in fault.value.note
    assert (
        len(fake_cli.calls(cli)) == 1
    )  # Claude Code retries the API itself: nothing stacked on it


def test_a_killed_cli_and_a_cli_without_a_result_are_faults_with_its_output(tmp_path, cli):
    fake_cli.script(
        cli,
        {"stderr": "Error: something broke inside", "kill": True},
        {"stderr": "Invalid API key · Please run /login", "exit": 1},
    )
    ctx = make_ctx(tmp_path)
    with pytest.raises(
        StageFault,
        match=r"the claude CLI was killed by signal SIGKILL \(9\): Error: something broke",
    ):
        ask(ctx)
    with pytest.raises(
        StageFault, match=r"printed no result \(exit 1\): Invalid API key · Please run /login"
    ):
        ask(ctx)


def test_an_answer_the_schema_refuses_is_a_fault(tmp_path, cli):
    fake_cli.script(cli, {"lines": [success({"plan_summary": "x"})]})
    with pytest.raises(StageFault, match="does not match Answer: .*has_major_deviation"):
        ask(make_ctx(tmp_path))


def test_a_timeout_kills_the_cli(tmp_path, cli):
    hang = tmp_path / "bin" / "claude"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    with pytest.raises(StageFault, match="timed out after 0.5 s; its process group was killed"):
        ask(make_ctx(tmp_path, settings={"llm_timeout_s": 0.5}))


def test_the_budget_is_checked_before_the_call_and_the_rest_handed_to_the_cli(tmp_path, cli):
    fake_cli.script(cli, {"lines": [success(GOOD)]})
    ask(make_ctx(tmp_path, settings={"max_cost_usd": 1.0}, usage=Usage(cost_usd=0.25)))
    assert option(fake_cli.calls(cli)[0]["argv"], "--max-budget-usd") == "0.7500"
    with pytest.raises(StageFault, match="budget exceeded: .* the CLI was not started"):
        ask(make_ctx(tmp_path, settings={"max_cost_usd": 1.0}, usage=Usage(cost_usd=1.0)))
    assert len(fake_cli.calls(cli)) == 1


def test_a_missing_cli_is_a_usage_error_before_the_run_and_a_fault_inside_it(tmp_path, monkeypatch):
    from stepkit.errors import UsageError

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UsageError, match="the 'claude' CLI \\(Claude Code\\) is not on PATH"):
        check_engine_spec("claude", tmp_path, pm=get_plugin_manager(), calls=True)
    check_engine_spec(
        "claude", tmp_path, pm=get_plugin_manager()
    )  # not called: the kind is all that is checked
    with pytest.raises(StageFault, match="LLM fault in node orient .*not on PATH"):
        ask(make_ctx(tmp_path))


def test_a_thread_is_one_claude_code_session_resumed_with_only_the_new_prompt(tmp_path, cli):
    """The built-in coder's rounds on ``--engine claude``: the first call
    opens a saved session, every later one resumes it by the result's
    ``session_id`` and sends only its own prompt (the session holds the rest)."""
    fake_cli.script(cli, {"lines": [success(GOOD)]})
    ctx = make_ctx(tmp_path)
    engine = make_engine(None, ctx)
    thread = engine.new_thread()
    for prompt in ("Plan now.", "Make the change now.", "The lint gate failed: fix it."):
        engine.structured(
            node="coder_edit",
            system="You code.",
            prefix="# Step 1 plan",
            prompt=prompt,
            schema=Answer,
            tools=coder_tools(ctx.project_dir),
            ctx=ctx,
            thread=thread,
        )
    first, *later = fake_cli.calls(cli)
    assert not first["resumed"] and "--no-session-persistence" not in first["argv"]
    assert first["stdin"] == "# Step 1 plan\n\nPlan now."
    assert thread.session == first["session"]
    for call, prompt in zip(
        later, ("Make the change now.", "The lint gate failed: fix it."), strict=True
    ):
        assert call["resumed"] and option(call["argv"], "--resume") == first["session"]
        assert call["stdin"] == prompt  # no plan, no prefix again
        assert (
            option(call["argv"], "--permission-mode") == "acceptEdits"
        )  # the flags of each call, again
    # a single call (no thread) is not saved: nothing will resume it
    ask(ctx)
    assert "--no-session-persistence" in fake_cli.calls(cli)[-1]["argv"]


def test_a_session_claude_code_no_longer_has_starts_the_conversation_again(tmp_path, cli):
    """Its session store was cleared (or the run resumed on another machine):
    Claude Code says so, naming the id; the round is sent again as a new
    session with the whole material."""
    from stepkit.plugins.llm.helpers import Thread

    fake_cli.script(cli, {"lines": [success(GOOD)]})
    ctx = make_ctx(tmp_path)
    thread = Thread(session="0b9e8f1c-gone-4c1e-9d7e-2f0a5c6b7d80")
    answer = make_engine(None, ctx).structured(
        node="coder_edit",
        system="You code.",
        prefix="# Step 1 plan",
        prompt="The lint gate failed: fix it.",
        schema=Answer,
        tools=coder_tools(ctx.project_dir),
        ctx=ctx,
        thread=thread,
    )
    assert answer == Answer(**GOOD)
    lost, fresh = fake_cli.calls(cli)
    assert (
        lost["resumed"]
        and option(lost["argv"], "--resume") == "0b9e8f1c-gone-4c1e-9d7e-2f0a5c6b7d80"
    )
    assert (
        not fresh["resumed"] and fresh["stdin"] == "# Step 1 plan\n\nThe lint gate failed: fix it."
    )
    assert thread.session == fresh["session"]
    assert [e["session"] for e in fake_cli.events(ctx, "llm_session_lost")] == [lost["session"]]
