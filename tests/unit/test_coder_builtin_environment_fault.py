"""The built-in coder never spends a fix on an environment fault: its own
build gate hits a missing tool, and it hands back at once (the step's gate
then ends the run with "Environment fault").  Real SDK against the loopback
Messages API, real gate runner."""

from __future__ import annotations

import sys

from stepkit.pluginmanager import get_plugin_manager
from stepkit.plugins.coders.anthropic import stepkit_implement
from tests.support.coder import make_ctx
from tests.support.gitrepo import init_repo

pytest_plugins = ["tests.support.messages_api"]

PLAN = {
    "files_to_touch": ["greet.py"],
    "risks": ["none"],
    "complexity": 3,
    "approach": "write greet() in greet.py",
}


def test_a_missing_build_tool_is_handed_back_without_a_fix_request(
    tmp_path, messages_api, monkeypatch
):
    project = init_repo(
        tmp_path / "project",
        {
            "check_greet.py": "import greet\nprint('1 passed in 0.01s')\n",
            "plans/steps/01-greet.md": "---\nstep: 1\ntitle: Greet\n---\n",
        },
    )
    monkeypatch.setenv("BUILD_CMD", "no-such-compiler-9d2 greet.py")
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} check_greet.py")
    monkeypatch.delenv("CODER_AUTOAPPROVE", raising=False)
    messages_api.reply_json(PLAN)
    messages_api.reply_tool(
        "write_file", {"path": "greet.py", "content": "def greet(name):\n    return name\n"}
    )
    messages_api.reply_tool(
        "run_command", {"command": "true"}
    )  # the coder runs its tests before answering
    messages_api.reply_json({"status": "done", "summary": "wrote greet()"})
    ctx = make_ctx(
        project,
        coder="anthropic",
        pm=get_plugin_manager(project),
        settings={"llm_max_retry_wait_s": 2, "llm_timeout_s": 10},
    )

    result = stepkit_implement(ctx)

    assert result.sentinel == "CODER_COMPLETE" and not result.crashed
    assert [(g.name, g.status) for g in result.gates if g.status != "not_run"] == [
        ("build", "error"),
        ("tests", "pass"),
    ]
    assert "environment fault: no-such-compiler-9d2: command not found" in result.text
    assert "Fix attempts: 0 of" in result.text
    assert (
        len(messages_api.requests) == 4
    )  # plan, edit, test run, the edit's end: no fix was asked for
