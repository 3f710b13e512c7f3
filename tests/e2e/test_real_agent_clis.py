"""Opt-in: the real Claude Code and Codex CLIs against loopback streaming
APIs (tests/support/sse_messages.py, sse_responses.py).  Runs when
``STEPKIT_REAL_CLIS`` is set (to a directory holding ``claude`` and
``codex``, or to ``1`` for the ones on PATH); a CLI that is not found skips:

- ``stepkit run --engine claude`` takes a step to the final gate, its LLM
  nodes answered through Claude Code's StructuredOutput tool;
- Claude Code, configured with ``stepkit mcp`` as an MCP server, calls its
  ``status`` tool and gets the plan's steps back;
- ``stepkit run --engine codex`` takes a step to the final gate.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.e2e import HANDOFF, ORIENT, PY, SWEEP, make_project
from tests.support.sse_messages import SSEMessagesAPI
from tests.support.sse_responses import SSEResponsesAPI, codex_home

REAL = os.environ.get("STEPKIT_REAL_CLIS", "")


def real_cli(name: str) -> str | None:
    return shutil.which(name, path=REAL if REAL != "1" else None) if REAL else None


CLAUDE, CODEX = real_cli("claude"), real_cli("codex")
needs_claude = pytest.mark.skipif(CLAUDE is None, reason="opt-in: set STEPKIT_REAL_CLIS to run the real "
                                                         "Claude Code CLI (a directory with claude, or 1)")
needs_codex = pytest.mark.skipif(CODEX is None, reason="opt-in: set STEPKIT_REAL_CLIS to run the real "
                                                       "Codex CLI (a directory with codex, or 1)")


def claude_env(project, tmp_path: Path, api: SSEMessagesAPI) -> dict[str, str]:
    """The project's test environment with the real ``claude`` first on PATH,
    a fresh home and the loopback API."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return project.env(PATH=f"{Path(CLAUDE).parent}{os.pathsep}{os.environ['PATH']}", HOME=str(home),
                       ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY=api.api_key,
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")


@needs_claude
def test_a_step_reaches_the_final_gate_on_the_real_claude_cli(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    with SSEMessagesAPI() as api:
        for answer in (ORIENT, SWEEP, HANDOFF):
            api.reply_tool("StructuredOutput", answer)
        paused = project.stepkit("run", "--project-dir", str(project.root), "--engine", "claude",
                                 "--coder", project.scripted_coder, env=claude_env(project, tmp_path, api))
    assert paused.code == 5, paused.stderr
    assert paused.data["pending"]["node"] == "gate_user_review"
    assert "Added calc.mul." in project.handoff(1).read_text()
    assert paused.data["usage"]["input_tokens"] >= 3 * 1200
    assert [t["name"] for t in api.requests[0]["tools"]] == ["Glob", "Grep", "Read", "StructuredOutput"]


@needs_claude
def test_claude_code_calls_the_status_tool_of_stepkit_mcp(tmp_path):
    project = make_project(tmp_path)
    config = {"mcpServers": {"stepkit": {"command": PY, "args": ["-m", "stepkit", "mcp"],
                                         "cwd": str(project.root)}}}
    with SSEMessagesAPI() as api:
        api.reply_tool("mcp__stepkit__status", {"project_dir": str(project.root)})
        api.reply_text("The plan has three steps.")
        done = subprocess.run(
            [CLAUDE, "-p", "--output-format", "json", "--mcp-config", json.dumps(config),
             "--strict-mcp-config", "--allowedTools", "mcp__stepkit__status"],
            input="What is the plan's status?", cwd=project.root,
            # headless Claude Code sends its first request without waiting for MCP servers unless told to
            env={**claude_env(project, tmp_path, api), "MCP_CONNECTION_NONBLOCKING": "false"},
            capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mcp__stepkit__status" in {t["name"] for t in api.requests[0]["tools"]}
    (result,) = api.tool_results(1)
    text = json.dumps(result["content"])
    assert "Add mul" in text and "Add div" in text and not result.get("is_error")


@needs_codex
def test_a_step_reaches_the_final_gate_on_the_real_codex_cli(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    with SSEResponsesAPI() as api:
        for answer in (ORIENT, SWEEP, HANDOFF):
            api.reply_json(answer)
        home = codex_home(tmp_path / "codex-home", api)
        env = project.env(PATH=f"{Path(CODEX).parent}{os.pathsep}{os.environ['PATH']}", HOME=str(home),
                          CODEX_HOME=str(home), OPENAI_API_KEY=api.api_key)
        paused = project.stepkit("run", "--project-dir", str(project.root), "--engine", "codex",
                                 "--coder", project.scripted_coder, env=env)
    assert paused.code == 5, paused.stderr
    assert paused.data["pending"]["node"] == "gate_user_review"
    assert "Added calc.mul." in project.handoff(1).read_text()
    assert paused.data["usage"]["cache_read_tokens"] == 3 * 400
    formats = [r["text"]["format"] for r in api.requests]
    assert all(f["type"] == "json_schema" and f["strict"] for f in formats)
