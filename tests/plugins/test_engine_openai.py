"""``--engine openai:MODEL``: the real ``openai`` SDK against a loopback
chat-completions server (tests/support/chat_api.py)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from stepkit.errors import UsageError
from stepkit.pluginmanager import get_plugin_manager
from stepkit.plugins.llm.engine import check_engine_spec, make_engine
from stepkit.plugins.llm.tools import read_only_tools
from stepkit.records import StageFault, Usage
from tests.support import fake_cli

pytest.importorskip(
    "openai", reason="the OpenAI SDK is not installed (pip install 'stepkit[openai]')"
)
pytest_plugins = ["tests.support.chat_api"]

GOOD = {"plan_summary": "adds slugify", "has_major_deviation": False}


class Answer(BaseModel):
    plan_summary: str
    has_major_deviation: bool


def make_ctx(tmp_path, settings=None, usage=None):
    ctx = fake_cli.stage_context(
        tmp_path, "openai:llama3.2", {"llm_max_retries": 0, **(settings or {})}, usage
    )
    (ctx.project_dir / "a.py").write_text("def slugify(text):\n    return text\n")
    return ctx


def ask(ctx, spec=None, tools=True):
    return make_engine(spec, ctx).structured(
        node="orient",
        system="You orient.",
        prefix="# Step 1 plan",
        prompt="Orient now.",
        schema=Answer,
        tools=read_only_tools(ctx.project_dir) if tools else None,
        ctx=ctx,
    )


def test_structured_answer_through_the_tool_loop(tmp_path, chat_api):
    chat_api.reply_tool("read_file", {"path": "a.py"})
    chat_api.reply_json(GOOD)
    ctx = make_ctx(tmp_path)
    assert ask(ctx) == Answer(**GOOD)

    first, second = chat_api.requests
    assert first["model"] == "llama3.2"
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][1]["content"] == "# Step 1 plan\n\nOrient now."
    assert {t["function"]["name"] for t in first["tools"]} == {
        "read_file",
        "list_dir",
        "search",
        "run_command",
    }
    schema = first["response_format"]["json_schema"]
    assert schema["strict"] is True and schema["schema"]["additionalProperties"] is False
    (result,) = chat_api.tool_messages()
    assert "def slugify" in result["content"]
    assert second["messages"][2]["tool_calls"][0]["function"]["name"] == "read_file"
    assert chat_api.headers[0]["authorization"] == f"Bearer {chat_api.api_key}"


def test_usage_per_call_and_llm_call_events(tmp_path, chat_api):
    chat_api.reply_tool("list_dir", {"path": "."})
    chat_api.reply_json(GOOD)
    ctx = make_ctx(tmp_path, usage=Usage(output_tokens=1))
    ask(ctx)
    assert (ctx.usage.input_tokens, ctx.usage.cache_read_tokens, ctx.usage.output_tokens) == (
        1600,
        400,
        101,
    )
    calls = fake_cli.events(ctx)
    assert [e["call"] for e in calls] == [1, 2] and calls[0]["stop_reason"] == "tool_calls"
    assert fake_cli.events(ctx, "llm_tool")[0]["tool"] == "list_dir"


def test_bad_tool_arguments_come_back_as_a_tool_error(tmp_path, chat_api):
    chat_api.reply_tool("read_file", "{not json")
    chat_api.reply_tool("nope", {})
    chat_api.reply_json(GOOD)
    ask(make_ctx(tmp_path))
    assert chat_api.tool_messages(1)[0]["content"].startswith(
        "error: the arguments are not a JSON object"
    )
    assert chat_api.tool_messages(2)[1]["content"] == "error: no tool named 'nope'"


def test_an_invalid_answer_is_sent_back_once_then_a_fault(tmp_path, chat_api):
    chat_api.reply_text("not json")
    chat_api.reply_json(GOOD)
    assert ask(make_ctx(tmp_path), tools=False) == Answer(**GOOD)
    assert "Your reply was not accepted" in chat_api.requests[1]["messages"][-1]["content"]

    chat_api.reply_json({"plan_summary": "x"})
    chat_api.reply_text('{"plan_summary": "cut', finish_reason="length")
    with pytest.raises(StageFault, match="the answer was invalid twice: the reply was cut off"):
        ask(make_ctx(tmp_path), tools=False)


def test_http_errors_and_an_unreachable_server_are_llm_faults(tmp_path, chat_api, monkeypatch):
    chat_api.error(500, "model llama3.2 not found, try pulling it first")
    with pytest.raises(
        StageFault,
        match=r"^LLM fault in node orient \(openai, model llama3.2\): the API call "
        r"failed: HTTP 500 \(model llama3.2 not found, try pulling it first\)",
    ):
        ask(make_ctx(tmp_path))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(StageFault, match="cannot reach http://127.0.0.1:9/v1"):
        ask(make_ctx(tmp_path))


def test_the_tool_loop_is_bounded(tmp_path, chat_api):
    for _ in range(3):
        chat_api.reply_tool("list_dir", {"path": "."})
    ctx = make_ctx(tmp_path)
    with pytest.raises(StageFault, match="no answer after 3 model turns"):
        make_engine(None, ctx).structured(
            node="orient",
            system="s",
            prompt="p",
            schema=Answer,
            tools=read_only_tools(ctx.project_dir),
            ctx=ctx,
            max_turns=3,
        )


def test_engines_openai_config_names_the_server_the_key_and_the_model(
    tmp_path, chat_api, monkeypatch
):
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("LOCAL_KEY", "sk-local-LOOPBACK-0123456789")
    ctx = make_ctx(tmp_path, settings={"engine": "openai"})
    (ctx.project_dir / "stepkit.toml").write_text(
        f'[engines.openai]\nbase_url = "{chat_api.base_url}"\nmodel = "qwen3"\napi_key_env = "LOCAL_KEY"\n'
    )
    chat_api.reply_json(GOOD)
    ask(ctx, tools=False)
    assert chat_api.requests[0]["model"] == "qwen3"
    assert chat_api.headers[0]["authorization"] == "Bearer sk-local-LOOPBACK-0123456789"


def test_setup_problems_are_usage_errors_before_the_run(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UsageError, match="needs a model"):
        check_engine_spec("openai", tmp_path, pm=get_plugin_manager())
    with pytest.raises(UsageError, match="no API key: set OPENAI_API_KEY"):
        check_engine_spec("openai:gpt-5.5", tmp_path, pm=get_plugin_manager(), calls=True)
    monkeypatch.setenv(
        "OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"
    )  # a local server needs no key
    check_engine_spec("openai:llama3.2", tmp_path, pm=get_plugin_manager(), calls=True)


def test_without_the_sdk_the_engine_says_what_to_install(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "openai", None)  # as if the extra were not installed
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    with pytest.raises(UsageError, match=r"needs the OpenAI SDK: pip install 'stepkit\[openai\]'"):
        check_engine_spec("openai:gpt-5.5", tmp_path, pm=get_plugin_manager(), calls=True)
