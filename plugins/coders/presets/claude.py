"""The ``claude`` preset (Claude Code): ``-p`` (print mode, prompt from
stdin), ``--output-format json`` (one result object: ``result``,
``is_error``, ``subtype``, ``api_error_status``, ``total_cost_usd``,
``usage``, ``session_id``, ``permission_denials``), ``--permission-mode
acceptEdits`` with ``--allowedTools Bash`` (print mode answers any other
Bash call "requires approval", and the coder must run the build and the
tests), ``--max-turns N``, ``--max-budget-usd X`` (at most what the run's
``max_cost_usd`` leaves).  Reviewer: ``--permission-mode plan`` and
``--json-schema`` (its findings come back as ``structured_output``).
Logged in: ``claude auth status`` (JSON, ``loggedIn``), or ANTHROPIC_API_KEY.
"""

from __future__ import annotations

import json
from pathlib import Path

from stepkit import quoting
from stepkit.plugins.agent_clis import INSTALL, claude_cost, claude_usage, usage_limit
from stepkit.plugins.coders.presets.base import Call, Parsed, Preset, json_objects
from stepkit.plugins.coders.presets.login import Login, json_answer
from stepkit.plugins.llm.budget import cost_left

DEFAULT_MAX_TURNS = 60
DEFAULT_MAX_BUDGET_USD = 10.0


def command(call: Call) -> str:
    turns = int(call.settings.get("coder_max_turns") or DEFAULT_MAX_TURNS)
    budget = float(call.settings.get("coder_max_budget_usd") or DEFAULT_MAX_BUDGET_USD)
    left = cost_left(call.settings, call.spent)
    if left is not None:
        budget = min(budget, left)
    mode = "plan" if call.review else "acceptEdits --allowedTools Bash"
    line = (
        f"claude -p --output-format json --permission-mode {mode} "
        f"--max-turns {turns} --max-budget-usd {round(budget, 4):g}"
    )
    if call.answer_schema is not None:
        from stepkit.plugins.llm.strict_schema import lean_json_schema  # only a review asks

        line += " " + quoting.shell(
            ["--json-schema", json.dumps(lean_json_schema(call.answer_schema))]
        )
    return line


def read(output: str, scratch: Path) -> Parsed | None:
    result = None
    for event in json_objects(output):
        if event.get("type") == "result" or "is_error" in event:
            result = event
    if result is None:
        return None
    errors = [str(e) for e in result.get("errors") or []]
    subtype = str(result.get("subtype") or "")
    reason = str(result.get("result") or "claude reported an error")
    if result.get("api_error_status"):
        errors.insert(0, f"API error {result['api_error_status']}: {reason}")
    elif subtype and subtype != "success":
        errors.insert(0, f"{subtype}: {reason}")
    elif result.get("is_error"):
        errors.insert(0, reason)
    text = str(result.get("result") or "")
    notes = []
    denials = result.get("permission_denials") or []
    if denials:  # worth knowing (e.g. a command it could not run), not a failure by itself
        tools = ", ".join(sorted({str(d.get("tool_name")) for d in denials}))
        notes.append(f"{len(denials)} tool call(s) were denied permission ({tools})")
    return Parsed(
        text=text,
        errors=tuple(errors),
        notes=tuple(notes),
        usage=claude_usage(result),
        cost_usd=claude_cost(result),
        session_id=result.get("session_id"),
        limit=usage_limit(" ".join(errors[:1])) if errors else None,
        structured=structured
        if isinstance(structured := result.get("structured_output"), dict)
        else None,
    )


def read_login(exit_code: int | None, output: str) -> bool | None:
    """``claude auth status``: a JSON object whose ``loggedIn`` says it
    (exit 0 logged in, 1 not); a version without the command cannot tell."""
    answer = json_answer(output)
    logged_in = answer.get("loggedIn") if answer else None
    return logged_in if isinstance(logged_in, bool) else None


LOGIN = Login(
    ("claude", "auth", "status"),
    read_login,
    keys=("ANTHROPIC_API_KEY",),
    fix="run `claude auth login`",
)

PRESET = Preset(
    "claude", command, read, checked=("2.1.332",), install=INSTALL["claude"], login=LOGIN
)
