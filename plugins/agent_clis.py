"""What the coding CLIs report about themselves, read in one place for the
presets (``--coder claude``, ``--coder codex`` …) and the CLI engines
(``--engine claude``, ``--engine codex``): how each is installed, how a
line of their JSON output reads and how their usage figures read."""

from __future__ import annotations

from typing import Any

from stepkit.records import Usage

#: How each CLI is installed (named when it is missing).
INSTALL = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
    "aider": "python -m pip install aider-chat",
    "opencode": "npm install -g opencode-ai",
}


def number(value: Any) -> float | None:
    """A figure of the CLI's JSON as a float; None when absent or not a number."""
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def count(value: Any) -> int:
    """A token count of the CLI's JSON; 0 when absent or not a number."""
    figure = number(value)
    return int(figure) if figure is not None else 0


def claude_cost(result: dict[str, Any]) -> float | None:
    """The dollars Claude Code's result says the call cost; None when it does not say."""
    cost = number(result.get("total_cost_usd", result.get("cost_usd")))
    return round(cost, 6) if cost is not None else None


def claude_usage(result: dict[str, Any]) -> Usage:
    """The tokens and cost of Claude Code's ``result`` object."""
    u = result.get("usage") or {}
    return Usage(input_tokens=count(u.get("input_tokens")), output_tokens=count(u.get("output_tokens")),
                 cache_read_tokens=count(u.get("cache_read_input_tokens")),
                 cache_write_tokens=count(u.get("cache_creation_input_tokens")),
                 cost_usd=claude_cost(result) or 0.0)


def codex_turn_usage(event: dict[str, Any]) -> Usage:
    """The tokens of one Codex ``turn.completed`` event (its ``input_tokens``
    include the cached ones: they are split out)."""
    u = event.get("usage") or {}
    cached = count(u.get("cached_input_tokens"))
    return Usage(input_tokens=max(0, count(u.get("input_tokens")) - cached), cache_read_tokens=cached,
                 cache_write_tokens=count(u.get("cache_write_input_tokens")),
                 output_tokens=count(u.get("output_tokens")))
