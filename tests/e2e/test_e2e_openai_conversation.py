"""A whole step on ``--engine openai`` through the real CLI and the real
SDK (loopback chat-completions server): the step's lint gate fails after
the built-in coder's round (whose own check, the same gates, passed), and
the fix round continues the same conversation, with the gate's evidence,
and never plans again."""

from __future__ import annotations

import sys

import pytest

from tests.support.e2e import GOOD_MUL, HANDOFF, ORIENT, SWEEP, make_project

pytest.importorskip("openai", reason="the OpenAI SDK is not installed (pip install 'stepkit[openai]')")
pytest_plugins = ["tests.support.chat_api"]

PLAN = {"status": "plan", "summary": "add mul", "plan": {
    "files_to_touch": ["calc.py"], "risks": ["none"], "complexity": 2, "approach": "Add mul next to add."}}


def coder_round(api, text: str, summary: str) -> None:
    api.reply_tool("read_file", {"path": "calc.py"})  # read before it is changed
    api.reply_tool("write_file", {"path": "calc.py", "content": text})
    api.reply_tool("run_command", {"command": "true"})
    api.reply_json({"status": "done", "summary": summary, "plan": None})


#: a lint that fails its second run only: the coder's own check (the first) passes, the
#: step's lint gate (the second; evidence reuse is off) fails, the fix round's check passes
LINT_ONCE = """import pathlib, sys
runs = pathlib.Path(sys.argv[1])
count = int(runs.read_text()) + 1 if runs.exists() else 1
runs.write_text(str(count))
if count == 2:
    print("calc.py:1:1: E999 forbidden marker")
    sys.exit(1)
"""


def test_a_step_level_fix_round_continues_the_coders_conversation(tmp_path, chat_api):
    project = make_project(tmp_path, reviewer=False)
    config = project.root / "stepkit.toml"
    config.write_text("reuse_coder_evidence = false\n" + config.read_text())
    lint = tmp_path / "lint_once.py"
    lint.write_text(LINT_ONCE)
    chat_api.reply_json(ORIENT)
    chat_api.reply_json(PLAN)
    coder_round(chat_api, GOOD_MUL, "Added calc.mul.")
    coder_round(chat_api, GOOD_MUL, "Nothing to remove: calc.py is clean.")
    chat_api.reply_json(SWEEP)
    chat_api.reply_json(HANDOFF)

    result = project.stepkit("run", "--project-dir", str(project.root), "--engine", "openai:llama3.2",
                             "--coder", "anthropic", "--set", "llm_max_retries=0",
                             env=project.env(LINT_CMD=f"{sys.executable} {lint} {tmp_path / 'lint_runs'}"))

    assert result.code == 5 and result.data["pending"]["node"] == "gate_user_review", result.stderr + result.stdout
    assert result.data["fix_attempts"] == 1
    coder = [r for r in chat_api.requests if r["messages"][0]["content"].startswith("You are the coder")]
    at = next(i for i, r in enumerate(coder)
              if str(r["messages"][-1]["content"]).startswith("A new implement round"))
    first_done, fix = coder[at - 1], coder[at]  # the first round's last request, the fix round's first
    assert fix["messages"][:len(first_done["messages"])] == first_done["messages"]  # carried
    opening = fix["messages"][-1]["content"]
    assert opening.startswith("A new implement round of this step")
    assert "The lint gate failed after your change." in opening and "E999 forbidden marker" in opening
    assert "Make the fix now" in opening and "since your last round" in opening
    asked = [m["content"] for m in coder[-1]["messages"] if m["role"] == "user"]
    assert sum("Plan the change now" in text for text in asked) == 1  # the plan round happened once
    assert opening.count("exit code: 1") == 1
