"""The built-in coder on ``--engine openai``: one conversation for the whole
step, over the loopback chat-completions server with the real SDK, as on
the Anthropic engine (tests/plugins/test_coder_builtin.py)."""

from __future__ import annotations

import json
import sys

import pytest

from stepkit.pluginmanager import get_plugin_manager
from stepkit.plugins.coders.anthropic import stepkit_implement
from tests.support.coder import make_ctx
from tests.support.gitrepo import init_repo

pytest.importorskip(
    "openai", reason="the OpenAI SDK is not installed (pip install 'stepkit[openai]')"
)
pytest_plugins = ["tests.support.chat_api"]

CHECK = (
    "from greet import greet\n"
    "value = greet('Ann')\n"
    "assert value == 'Hello, Ann!', f'greet returned {value!r}'\n"
    "print('1 passed in 0.01s')\n"
)
GOOD = "def greet(name):\n    return f'Hello, {name}!'\n"
PLAN = {
    "status": "plan",
    "summary": "write greet()",
    "plan": {
        "files_to_touch": ["greet.py"],
        "risks": ["none"],
        "complexity": 3,
        "approach": "write greet() in greet.py",
    },
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = init_repo(
        tmp_path / "project",
        {
            "check_greet.py": CHECK,
            ".gitignore": "__pycache__/\n",
            "plans/steps/03-add-greeting.md": "---\nstep: 3\n---\n",
        },
    )
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} check_greet.py")
    return root


def ctx_for(project, **state):
    return make_ctx(
        project,
        coder="anthropic",
        pm=get_plugin_manager(project),
        state=state,
        settings={"engine": "openai:llama3.2", "llm_max_retries": 0, "llm_timeout_s": 10},
    )


def queue_edit(api, text: str, summary: str) -> None:
    api.reply_tool("write_file", {"path": "greet.py", "content": text})
    api.reply_tool("run_command", {"command": f"{sys.executable} check_greet.py"})
    api.reply_json({"status": "done", "summary": summary, "plan": None})


def test_every_round_of_the_step_is_one_conversation(project, chat_api):
    chat_api.reply_json(PLAN)
    queue_edit(chat_api, "def greet(name):\n    return 'Hi'\n", "first try")
    queue_edit(chat_api, GOOD, "fixed the greeting")  # the coder's own fix round
    first = stepkit_implement(ctx_for(project))
    assert first.sentinel == "CODER_COMPLETE" and "Fix attempts: 1 of 3" in first.text
    own_fix = chat_api.requests[4]["messages"]
    assert "The tests gate failed after your change (fix attempt 1 of 3)" in own_fix[-1]["content"]
    assert "first try" in json.dumps(own_fix)  # the round's earlier turns

    round_one = len(chat_api.requests)
    queue_edit(chat_api, GOOD, "lint fixed")  # a step-level fix: no new plan
    fix = "The lint gate failed after your change.\n$ ruff check\nexit code: 1\nF401 `os` imported but unused"
    second = stepkit_implement(ctx_for(project, fix_instructions=fix))

    assert second.sentinel == "CODER_COMPLETE"
    messages = chat_api.requests[round_one]["messages"]
    assert [m["role"] for m in messages].count("system") == 1
    assert messages[: len(own_fix)] == own_fix  # the step's conversation, carried
    opening = messages[-1]["content"]
    assert opening.startswith("A new implement round of this step") and fix in opening
    assert "Make the fix now" in opening and "since your last round" in opening
    user_turns = [m["content"] for m in messages if m["role"] == "user"]
    assert sum("Plan the change now" in text for text in user_turns) == 1
    assert not any(
        "Plan the change now" in (m.get("content") or "")
        for m in chat_api.requests[-1]["messages"][len(messages) :]
    )
