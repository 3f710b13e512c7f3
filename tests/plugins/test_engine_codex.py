"""``--engine codex``: ``codex exec --json``, tested against a stand-in CLI
that replays the JSON lines recorded from the real one (Codex 0.171.0
against a loopback Responses API; tests/support/recorded/codex_*.jsonl)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from stepkit.pluginmanager import get_plugin_manager
from stepkit.plugins.llm.engine import check_engine_spec, make_engine
from stepkit.plugins.llm.tools import coder_tools, read_only_tools
from stepkit.records import StageFault, Usage
from tests.support import fake_cli


class Answer(BaseModel):
    plan_summary: str
    has_major_deviation: bool
    risks: list[str] = Field(default_factory=list)


GOOD = {"plan_summary": "Add calc.mul next to add.", "has_major_deviation": False}


@pytest.fixture
def cli(tmp_path, monkeypatch):
    state = tmp_path / "codex-state"
    fake_cli.install(tmp_path / "bin", "codex", state)
    monkeypatch.setenv("PATH", fake_cli.path_with(tmp_path / "bin"))
    return state


def make_ctx(tmp_path, settings=None, usage=None):
    return fake_cli.stage_context(tmp_path, "codex", settings, usage)


def ask(ctx, tools="read", spec=None, node="orient"):
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
    )


def test_the_final_agent_message_is_the_answer_and_the_schema_file_is_strict(tmp_path, cli):
    fake_cli.script(cli, {"lines": fake_cli.recorded("codex_command_then_answer.jsonl")})
    ctx = make_ctx(tmp_path)
    assert ask(ctx) == Answer(**GOOD)

    (call,) = fake_cli.calls(cli)
    argv = call["argv"]
    assert argv[:2] == ["exec", "--json"] and argv[-1] == "-"
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    assert "-m" not in argv  # no model named: Codex's own default
    assert call["stdin"] == "You orient.\n\n# Step 1 plan\n\nOrient now."
    schema = call["output_schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == [
        "plan_summary",
        "has_major_deviation",
        "risks",
    ]  # strict: all of them
    assert "default" not in json.dumps(schema)


def test_usage_is_summed_from_turn_completed_and_priced_for_budgets(tmp_path, cli):
    fake_cli.script(cli, {"lines": fake_cli.recorded("codex_command_then_answer.jsonl")})
    ctx = make_ctx(tmp_path, usage=Usage(output_tokens=1))
    ask(ctx, spec="codex:gpt-5.5")
    assert (ctx.usage.input_tokens, ctx.usage.cache_read_tokens, ctx.usage.output_tokens) == (
        2200,
        800,
        181,
    )
    (event,) = fake_cli.events(ctx)
    assert event["engine"] == "codex" and event["model"] == "gpt-5.5" and event["cost_usd"] > 0
    assert fake_cli.calls(cli)[0]["argv"][-3:] == ["-m", "gpt-5.5", "-"]


def test_a_writing_node_runs_in_the_workspace_write_sandbox(tmp_path, cli):
    fake_cli.script(cli, {"lines": fake_cli.recorded("codex_success.jsonl")})
    ask(make_ctx(tmp_path), tools="write", node="coder_edit")
    argv = fake_cli.calls(cli)[0]["argv"]
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"


def test_reconnect_notices_and_error_items_are_not_failures(tmp_path, cli):
    notices = fake_cli.recorded("codex_reconnecting.jsonl")[
        2:7
    ]  # error events and a transport error item
    assert {line["type"] for line in notices} == {"error", "item.completed"}
    ok = fake_cli.recorded("codex_success.jsonl")
    fake_cli.script(
        cli,
        {
            "lines": ok[:2] + notices + ok[2:],
            "stderr": "WARNING: proceeding, even though we could not create PATH aliases",
        },
    )
    assert ask(make_ctx(tmp_path)) == Answer(**GOOD)


@pytest.mark.parametrize(
    "fixture, exit_code, words",
    [
        (
            "codex_turn_failed.jsonl",
            1,
            "the codex turn failed: Invalid schema for response_format codex_output_schema",
        ),
        (
            "codex_not_json.jsonl",
            0,
            "the final message is not a valid Answer: .* it was: I think the plan is fine",
        ),
        (
            "codex_reconnecting.jsonl",
            1,
            r"the codex CLI gave no final message \(exit 1\): Reconnecting\.\.\. waiting for network",
        ),
    ],
)
def test_codex_failures_are_llm_faults_in_its_own_words_never_retried(
    tmp_path, cli, fixture, exit_code, words
):
    fake_cli.script(cli, {"lines": fake_cli.recorded(fixture), "exit": exit_code})
    with pytest.raises(StageFault, match=r"^LLM fault in node orient \(codex CLI\): " + words):
        ask(make_ctx(tmp_path))
    assert len(fake_cli.calls(cli)) == 1


def test_a_killed_codex_is_a_fault_and_a_missing_one_a_usage_error(tmp_path, cli, monkeypatch):
    from stepkit.errors import UsageError

    fake_cli.script(cli, {"lines": fake_cli.recorded("codex_success.jsonl")[:2], "kill": True})
    with pytest.raises(StageFault, match=r"the codex CLI was killed by signal SIGKILL"):
        ask(make_ctx(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UsageError, match="the 'codex' CLI is not on PATH"):
        check_engine_spec("codex", tmp_path, pm=get_plugin_manager(), calls=True)


def test_a_spent_budget_starts_no_codex(tmp_path, cli):
    fake_cli.script(cli, {"lines": fake_cli.recorded("codex_success.jsonl")})
    with pytest.raises(StageFault, match="budget exceeded"):
        ask(make_ctx(tmp_path, settings={"max_tokens": 100}, usage=Usage(input_tokens=100)))
    assert fake_cli.calls(cli) == []


def test_a_thread_is_one_codex_session_resumed_with_only_the_new_prompt(tmp_path, cli):
    """``codex exec`` opens a saved session (no ``--ephemeral``); a later call
    of the thread is ``codex exec <options> resume THREAD_ID -`` with only its
    prompt, THREAD_ID the first call's ``thread.started``."""
    fake_cli.script(cli, {"lines": fake_cli.recorded("codex_success.jsonl")})
    ctx = make_ctx(tmp_path)
    engine = make_engine(None, ctx)
    thread = engine.new_thread()
    for prompt, tools in (
        ("Plan now.", read_only_tools(ctx.project_dir)),
        ("Make the change now.", coder_tools(ctx.project_dir)),
        ("Fix these critical review findings: x", coder_tools(ctx.project_dir)),
    ):
        engine.structured(
            node="coder_edit",
            system="You code.",
            prefix="# Step 1 plan",
            prompt=prompt,
            schema=Answer,
            tools=tools,
            ctx=ctx,
            thread=thread,
        )
    first, *later = fake_cli.calls(cli)
    assert (
        not first["resumed"]
        and "--ephemeral" not in first["argv"]
        and "resume" not in first["argv"]
    )
    assert first["stdin"] == "You code.\n\n# Step 1 plan\n\nPlan now."
    assert thread.session == first["session"]
    for call, prompt in zip(
        later, ("Make the change now.", "Fix these critical review findings: x"), strict=True
    ):
        argv = call["argv"]
        assert call["resumed"] and argv[-3:] == ["resume", first["session"], "-"]
        assert call["stdin"] == prompt
        # the call's options come before the subcommand: its schema and its sandbox
        assert argv[argv.index("--sandbox") + 1] == "workspace-write" and argv.index(
            "--output-schema"
        ) < argv.index("resume")
        assert call["output_schema"]["required"] == ["plan_summary", "has_major_deviation", "risks"]
    ask(ctx)  # a single call is ephemeral
    assert "--ephemeral" in fake_cli.calls(cli)[-1]["argv"]


def test_a_session_codex_no_longer_has_starts_the_conversation_again(tmp_path, cli):
    from stepkit.plugins.llm.helpers import Thread

    fake_cli.script(cli, {"lines": fake_cli.recorded("codex_success.jsonl")})
    ctx = make_ctx(tmp_path)
    thread = Thread(session="01a231ba-0000-7a32-8140-6a927d274b36")
    answer = make_engine(None, ctx).structured(
        node="coder_edit",
        system="You code.",
        prefix="# Step 1 plan",
        prompt="Fix it.",
        schema=Answer,
        tools=coder_tools(ctx.project_dir),
        ctx=ctx,
        thread=thread,
    )
    assert answer == Answer(**GOOD)
    lost, fresh = fake_cli.calls(cli)
    assert lost["argv"][-3:] == ["resume", "01a231ba-0000-7a32-8140-6a927d274b36", "-"]
    assert not fresh["resumed"] and fresh["stdin"] == "You code.\n\n# Step 1 plan\n\nFix it."
    assert thread.session == fresh["session"]
    assert len(fake_cli.events(ctx, "llm_session_lost")) == 1
    assert (
        len(fake_cli.events(ctx)) == 1
    )  # the lost call made no llm_call: it never reached the model
