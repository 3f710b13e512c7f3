"""Coder presets: the CLIs are faked with pytest-subprocess (``fp``), their
outputs shaped like the real tools' (JSON result, JSONL events, text)."""

from __future__ import annotations

import json

import pytest

from stepkit.plugins.coders.command import stepkit_implement
from stepkit.plugins.coders.presets import PRESETS
from tests.support.coder import make_ctx

CLAUDE_OK = {
    "type": "result", "subtype": "success", "is_error": False, "duration_ms": 48211,
    "duration_api_ms": 45102, "num_turns": 14,
    "result": "Added greet() in greet.py and tests/test_greet.py.\n\nCODER_COMPLETE",
    "stop_reason": "end_turn", "session_id": "9f0c6c1e-4b7e-4a57-9d36-2f0f4a1c1b55",
    "total_cost_usd": 0.2841, "usage": {"input_tokens": 1203, "output_tokens": 2210,
                                        "cache_read_input_tokens": 88120},
    "permission_denials": [],
}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    return root


def command_of(name: str, **settings) -> str:
    return PRESETS[name].command(settings, review=False)


def implement(project, coder: str, **settings):
    return stepkit_implement(make_ctx(project, coder=coder, settings=settings))


def test_claude_command_line_and_a_successful_result(project, fp):
    cmd = command_of("claude")
    assert cmd == ("claude -p --output-format json --permission-mode acceptEdits "
                   "--max-turns 60 --max-budget-usd 10")
    fp.register(cmd, stdout=json.dumps(CLAUDE_OK))
    result = implement(project, "claude")
    assert result.sentinel == "CODER_COMPLETE"
    assert result.text.startswith("Added greet() in greet.py")
    assert result.cost_usd == pytest.approx(0.2841)
    assert result.session_id == "9f0c6c1e-4b7e-4a57-9d36-2f0f4a1c1b55"
    assert not result.crashed


def test_claude_turn_and_budget_limits_come_from_the_settings(project, fp):
    cmd = command_of("claude", coder_max_turns=12, coder_max_budget_usd=2.5)
    assert cmd.endswith("--max-turns 12 --max-budget-usd 2.5")
    fp.register(cmd, stdout=json.dumps(CLAUDE_OK))
    assert implement(project, "claude", coder_max_turns=12, coder_max_budget_usd=2.5).sentinel == "CODER_COMPLETE"


def test_claude_error_result_is_failed_with_its_reason_and_cost(project, fp):
    error = {**CLAUDE_OK, "subtype": "error_max_turns", "is_error": True,
             "result": "Reached max turns (60)", "total_cost_usd": 1.75,
             "permission_denials": [{"tool_name": "Bash", "tool_input": {"command": "pytest"}}]}
    fp.register(command_of("claude"), stdout=json.dumps(error), returncode=1)
    result = implement(project, "claude")
    assert result.sentinel == "CODER_FAILED"
    assert "error: error_max_turns: Reached max turns (60)" in result.text
    assert "[claude: 1 tool call(s) were denied permission]" in result.text
    assert result.cost_usd == pytest.approx(1.75)
    assert result.exit_code == 1


def test_claude_sentinel_in_its_result_wins(project, fp):
    rejected = {**CLAUDE_OK, "result": "The plan contradicts the code.\nCODER_REJECTED"}
    fp.register(command_of("claude"), stdout=json.dumps(rejected))
    assert implement(project, "claude").sentinel == "CODER_REJECTED"


def test_claude_without_a_sentinel_is_judged_by_its_own_report(project, fp):
    denied = [{"tool_name": "Bash", "tool_input": {"command": "pytest -q"}}]
    fp.register(command_of("claude"), stdout=json.dumps(
        {**CLAUDE_OK, "result": "Done.", "permission_denials": denied}))
    result = implement(project, "claude")
    assert result.sentinel == "CODER_COMPLETE"  # a denied test run is not a failure
    assert "1 tool call(s) were denied permission" in result.text
    assert "claude finished without error" in result.text


def test_claude_output_that_is_not_json_falls_back_to_the_exit_code(project, fp):
    fp.register(command_of("claude"), stdout="Error: Invalid API key · Please run /login\n",
                returncode=1)
    result = implement(project, "claude")
    assert result.sentinel == "CODER_FAILED"
    assert "could not read claude's output format" in result.text
    assert "Invalid API key" in result.text


def test_a_preset_cli_that_is_missing_or_killed_crashed(project, fp):
    fp.register(command_of("claude"), stderr="/bin/sh: 1: claude: not found\n", returncode=127)
    missing = implement(project, "claude")
    assert missing.crashed and "command not found (exit 127)" in missing.text
    fp.register(command_of("codex"), stdout='{"type":"thread.started","thread_id":"t1"}\n',
                returncode=-9)
    killed = implement(project, "codex")
    assert killed.crashed and "killed by signal SIGKILL" in killed.text


CODEX_EVENTS = [
    {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning",
                                        "text": "**Reading greet.py**"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution",
                                        "command": "bash -lc 'pytest -q'",
                                        "aggregated_output": "1 passed\n", "exit_code": 0,
                                        "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_2", "type": "file_change", "status": "completed",
                                        "changes": [{"path": "greet.py", "kind": "add"}]}},
    {"type": "item.completed", "item": {"id": "item_3", "type": "agent_message",
                                        "text": "Implemented greet(); tests pass.\nCODER_COMPLETE"}},
    {"type": "turn.completed", "usage": {"input_tokens": 24763, "cached_input_tokens": 24448,
                                         "output_tokens": 122}},
]


def jsonl(events) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_codex_command_line_and_events(project, fp):
    cmd = command_of("codex")
    assert cmd == "codex exec --sandbox workspace-write --json --skip-git-repo-check -"
    fp.register(cmd, stdout=jsonl(CODEX_EVENTS), stderr="Reading prompt from stdin...\n")
    result = implement(project, "codex")
    assert result.sentinel == "CODER_COMPLETE"
    assert result.text.startswith("Implemented greet(); tests pass.")
    assert result.session_id == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert result.cost_usd is None  # codex reports tokens, not cost


def test_codex_turn_failed_is_failed(project, fp):
    events = CODEX_EVENTS[:2] + [
        {"type": "error", "message": "stream disconnected before completion"},
        {"type": "turn.failed", "error": {"message": "stream disconnected before completion"}},
    ]
    fp.register(command_of("codex"), stdout=jsonl(events), returncode=1)
    result = implement(project, "codex")
    assert result.sentinel == "CODER_FAILED"
    assert "error: stream disconnected before completion" in result.text


AIDER_OUTPUT = """Aider v0.86.1
Main model: anthropic/claude-sonnet-4-5 with diff edit format
Git repo: .git with 3 files
Repo-map: using 4096 tokens, auto refresh

I'll add greet() to greet.py.

greet.py
<<<<<<< SEARCH
=======
def greet(name):
    return f"Hello, {name}!"
>>>>>>> REPLACE

Tokens: 4.1k sent, 112 received. Cost: $0.01 message, $0.01 session.
Applied edit to greet.py
Tokens: 5.0k sent, 40 received. Cost: $0.0061 message, $0.02 session.
CODER_COMPLETE
"""


def test_aider_command_line_cost_and_sentinel(project, fp):
    cmd = command_of("aider")
    assert cmd == ('aider --message-file "$STEPKIT_PROMPT_FILE" --yes-always --no-auto-commits '
                   "--no-pretty --no-stream --no-check-update")
    fp.register(cmd, stdout=AIDER_OUTPUT)
    result = implement(project, "aider")
    assert result.sentinel == "CODER_COMPLETE"
    assert result.cost_usd == pytest.approx(0.02)
    assert result.session_id is None
    assert "Applied edit to greet.py" in result.text


def test_aider_api_error_is_failed_even_with_exit_zero(project, fp):
    output = ("Aider v0.86.1\nlitellm.AuthenticationError: AnthropicException - "
              '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}\n')
    fp.register(command_of("aider"), stdout=output)
    result = implement(project, "aider")
    assert result.sentinel == "CODER_FAILED"
    assert "error: litellm.AuthenticationError" in result.text


OPENCODE_EVENTS = [
    {"type": "step_start", "timestamp": 1768191337567, "sessionID": "ses_44f9562d4ffe",
     "part": {"type": "step-start"}},
    {"type": "tool_use", "timestamp": 1768191339001, "sessionID": "ses_44f9562d4ffe",
     "part": {"type": "tool", "tool": "write", "state": {"status": "completed",
                                                        "input": {"filePath": "greet.py"}}}},
    {"type": "step_finish", "timestamp": 1768191339100, "sessionID": "ses_44f9562d4ffe",
     "part": {"type": "step-finish", "reason": "tool-calls", "cost": 0.0125,
              "tokens": {"input": 9120, "output": 310}}},
    {"type": "text", "timestamp": 1768191341000, "sessionID": "ses_44f9562d4ffe",
     "part": {"type": "text", "text": "greet() added.\n\nCODER_COMPLETE"}},
    {"type": "step_finish", "timestamp": 1768191341200, "sessionID": "ses_44f9562d4ffe",
     "part": {"type": "step-finish", "reason": "stop", "cost": 0.0031,
              "tokens": {"input": 9500, "output": 20}}},
]


def test_opencode_command_line_cost_and_session(project, fp):
    cmd = command_of("opencode")
    assert cmd == "opencode run --format json"
    fp.register(cmd, stdout=jsonl(OPENCODE_EVENTS))
    result = implement(project, "opencode")
    assert result.sentinel == "CODER_COMPLETE"
    assert result.cost_usd == pytest.approx(0.0156)
    assert result.session_id == "ses_44f9562d4ffe"
    assert result.text.startswith("greet() added.")


def test_opencode_error_event_is_failed(project, fp):
    events = OPENCODE_EVENTS[:1] + [
        {"type": "error", "timestamp": 1768191337600, "sessionID": "ses_44f9562d4ffe",
         "error": {"name": "ProviderAuthError", "data": {"message": "No API key for anthropic"}}},
    ]
    fp.register(command_of("opencode"), stdout=jsonl(events))
    result = implement(project, "opencode")
    assert result.sentinel == "CODER_FAILED"
    assert "error: No API key for anthropic" in result.text
    assert result.session_id == "ses_44f9562d4ffe"


def test_reviewer_variants_are_read_only():
    review = {name: preset.command({}, review=True) for name, preset in PRESETS.items()}
    assert "--permission-mode plan" in review["claude"]
    assert "--sandbox read-only" in review["codex"]
    assert review["aider"].endswith("--dry-run")
    assert review["opencode"] == "opencode run --format json --agent plan"
