"""The engines on the real CLIs (opt-in, see conftest.py): ``stepkit run
--engine claude`` and ``--engine codex`` take a step to the final gate with
the LLM nodes answered through the real CLI against the loopback API it
speaks, and Claude Code, configured with ``stepkit mcp`` as an MCP server,
calls its ``status`` tool.  The coder is the command coder of
tests/support/e2e.py (the presets' own suite drives the CLIs as coders)."""

from __future__ import annotations

import json
import subprocess

import pytest

from stepkit.workspace.store import store_dir
from tests.realcli.harness import Model
from tests.support.e2e import GOOD_MUL, HANDOFF, ORIENT, PY, SWEEP, make_project

pytestmark = pytest.mark.realcli

#: orient's answer in its engine schema (a real CLI enforces the JSON schema;
#: the protocol-field shape of ORIENT is accepted only by stepkit's own validation)
ORIENT_ANSWER = {
    "plan_summary": ORIENT["plan_summary"],
    "implementation_brief": ORIENT["implementation_brief"],
    "findings": [],
    "deviation_summary": "None",
}
#: write_handoff's answer in its engine schema: a criterion named by its id (an enum
#: the real CLI enforces; stepkit's own validation also reads the criterion's text)
HANDOFF_ANSWER = {**HANDOFF, "acceptance_criteria": [{"criterion": "C1", "tests": []}]}
#: the LLM nodes of a step the command coder implements, in order
ANSWERS = (ORIENT_ANSWER, SWEEP, HANDOFF_ANSWER)


def handoff_draft(project, paused) -> str:
    """The handoff written for the final gate (the plans get it once approved)."""
    run_dir = store_dir(project.root) / "runs" / paused.data["run_id"]
    state = json.loads((run_dir / "state.json").read_text())
    return (project.root / state["state"]["handoff_draft"]).read_text()


def run_to_the_final_gate(tmp_path, cli_bin, cli: str):
    project = make_project(tmp_path, reviewer=False)
    with Model(cli, tmp_path) as model:
        for answer in ANSWERS:
            if cli == "claude":
                model.api.reply_tool(
                    "StructuredOutput", answer
                )  # how Claude Code answers --json-schema
            else:
                model.api.reply_text(json.dumps(answer))
        paused = project.stepkit(
            "run",
            "--project-dir",
            str(project.root),
            "--engine",
            cli,
            "--coder",
            project.scripted_coder,
            env=project.env(**model.env(cli_bin(cli))),
        )
        requests = list(model.api.requests)
    assert paused.code == 5, paused.stderr
    assert paused.data["pending"]["node"] == "gate_user_review"
    assert "Added calc.mul." in handoff_draft(project, paused)
    assert paused.data["usage"]["input_tokens"] > 0
    return requests


def test_a_step_reaches_the_final_gate_on_claude_code(tmp_path, cli_bin):
    requests = run_to_the_final_gate(tmp_path, cli_bin, "claude")
    tools = [t["name"] for t in requests[0].body["tools"]]
    assert sorted(tools) == ["Glob", "Grep", "Read", "StructuredOutput"]  # orient: read-only


def test_a_step_reaches_the_final_gate_on_codex(tmp_path, cli_bin):
    requests = run_to_the_final_gate(tmp_path, cli_bin, "codex")
    formats = [r.body["text"]["format"] for r in requests]
    assert all(f["type"] == "json_schema" and f["strict"] for f in formats)


def test_a_whole_step_on_claude_code_alone(tmp_path, cli_bin):
    """--engine claude --coder claude --reviewer claude: the LLM nodes, the coder
    and the reviewer all on Claude Code."""
    project = make_project(tmp_path, reviewer=False)
    with Model("claude", tmp_path) as model:
        model.api.reply_tool("StructuredOutput", ORIENT_ANSWER)
        model.write(project.root / "calc.py", GOOD_MUL)  # the claude preset, as coder
        model.say("Added calc.mul.\n\nCODER_COMPLETE")
        model.api.reply_tool("StructuredOutput", {**SWEEP, "needs_independent_review": True})
        model.review("calc.py", "mul is fine.")  # the claude preset, as reviewer
        model.api.reply_tool("StructuredOutput", HANDOFF_ANSWER)
        env = project.env(**model.env(cli_bin("claude")))
        paused = project.stepkit(
            "run",
            "--project-dir",
            str(project.root),
            "--engine",
            "claude",
            "--coder",
            "claude",
            "--reviewer",
            "claude",
            env=env,
        )
        assert paused.code == 5, paused.stderr + paused.stdout
        assert paused.data["pending"]["node"] == "gate_user_review"
        done = project.resume("approve", env=env)
    assert done.outcome == "STEP_COMPLETE", done.stderr
    assert (project.root / "calc.py").read_text() == GOOD_MUL
    state = (store_dir(project.root) / "runs" / paused.data["run_id"] / "state.json").read_text()
    assert "mul is fine" in state  # the review ran on Claude Code and was recorded


def test_claude_code_calls_the_status_tool_of_stepkit_mcp(tmp_path, cli_bin):
    pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'stepkit[mcp]')")
    project = make_project(tmp_path)
    config = {
        "mcpServers": {
            "stepkit": {"command": PY, "args": ["-m", "stepkit", "mcp"], "cwd": str(project.root)}
        }
    }
    with Model("claude", tmp_path) as model:
        model.api.reply_tool("mcp__stepkit__status", {"project_dir": str(project.root)})
        model.say("The plan has three steps.")
        # headless Claude Code sends its first request without waiting for MCP servers unless
        # told to, and offers MCP tools only through its tool search unless that is off
        env = project.env(
            **model.env(cli_bin("claude")),
            MCP_CONNECTION_NONBLOCKING="false",
            ENABLE_TOOL_SEARCH="false",
        )
        done = subprocess.run(
            [
                "claude",
                "-p",
                "--output-format",
                "json",
                "--mcp-config",
                json.dumps(config),
                "--strict-mcp-config",
                "--allowedTools",
                "mcp__stepkit__status",
            ],
            input="What is the plan's status?",
            cwd=project.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        requests = list(model.api.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mcp__stepkit__status" in {t["name"] for t in requests[0].body["tools"]}
    (result,) = [
        b for b in requests[1].body["messages"][-1]["content"] if b.get("type") == "tool_result"
    ]
    text = json.dumps(result["content"])
    assert "Add mul" in text and "Add div" in text and not result.get("is_error")
