"""What the coding CLIs report about themselves, read in one place for the
presets (``--coder claude``, ``--coder codex`` …) and the CLI engines
(``--engine claude``, ``--engine codex``): how each is installed, how a
line of their JSON output reads and how their usage figures read."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stepkit.lazyregex import lazy_compile
from stepkit.records import Usage

#: How each CLI is installed (named when it is missing).
INSTALL = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
    "aider": "python -m pip install aider-chat",
    "opencode": "npm install -g opencode-ai",
}

#: Where each CLI keeps its own state outside the project (login, sessions,
#: settings, logs): what it may write besides the project when stepkit
#: confines it (:mod:`stepkit.workspace.sandbox`).  Each entry is written as
#: the CLI finds it: ``${VAR:-default}`` where a variable moves it (opencode
#: follows the XDG base directories, ``CODEX_HOME``, ``CLAUDE_CONFIG_DIR``);
#: ``/`` ends a directory.  Checked against where each CLI wrote in its
#: recorded runs (``home_writes`` of tests/fixtures/transcripts/) and on the
#: real CLIs in the sandbox (tests/realcli).  Their caches need no entry: a
#: confined command's ``XDG_CACHE_HOME`` is its own private directory.
STATE = {
    "claude": ("${CLAUDE_CONFIG_DIR:-~/.claude}/",),
    "codex": ("${CODEX_HOME:-~/.codex}/",),
    "aider": ("~/.aider/",),
    "opencode": (
        "${XDG_CONFIG_HOME:-~/.config}/opencode/",
        "${XDG_DATA_HOME:-~/.local/share}/opencode/",
        "${XDG_STATE_HOME:-~/.local/state}/opencode/",
    ),
}
#: What a CLI rewrites in the home directory that stays read-only in the
#: sandbox: its rewrite fails there and the CLI works on without it (shown
#: on the real CLI).  Claude Code rewrites ``~/.claude.json`` (start counts,
#: per-project history) through a new file beside it and a rename, which the
#: read-only home directory refuses; binding the file itself writable would
#: not let that through, only let a coder edit it in place (its
#: ``mcpServers`` run commands outside any sandbox).
UNSAVED = {"claude": ("${CLAUDE_CONFIG_DIR:-~}/.claude.json",)}

_VARIABLE = lazy_compile(r"\$\{(?P<name>\w+):-(?P<default>[^}]*)\}")


def state_path(entry: str, environ: Mapping[str, str] | None = None) -> Path:
    """An entry of :data:`STATE` as the path it names in ``environ`` (default
    ``os.environ``): ``${VAR:-default}`` is ``VAR`` when it is set to an
    absolute path, else ``default``; then ``~`` is expanded."""
    env = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        given = env.get(match.group("name"), "")
        return given if os.path.isabs(given) else match.group("default")

    text = _VARIABLE.sub(value, entry)
    home = env.get("HOME") or str(Path.home())
    return Path(home + text[1:] if text == "~" or text.startswith("~/") else text)


def codex_sandbox(write: bool) -> str:
    """codex's own ``--sandbox`` mode: ``read-only``, else ``workspace-write``;
    ``danger-full-access`` inside stepkit's sandbox, which confines it
    already (codex's bubblewrap cannot always nest: it fails to remount
    ``/`` in a mount namespace it does not own)."""
    from stepkit.workspace import sandbox

    if not write:
        return "read-only"
    return "danger-full-access" if sandbox.current() is not None else "workspace-write"


def state_paths(name: str) -> tuple[Path, ...]:
    """:data:`STATE` of the CLI ``name`` as paths (:func:`state_path`), its
    missing directories created."""
    paths = []
    for entry in STATE.get(name, ()):
        path = state_path(entry)
        if entry.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        paths.append(path)
    return tuple(paths)


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
    return Usage(
        input_tokens=count(u.get("input_tokens")),
        output_tokens=count(u.get("output_tokens")),
        cache_read_tokens=count(u.get("cache_read_input_tokens")),
        cache_write_tokens=count(u.get("cache_creation_input_tokens")),
        cost_usd=claude_cost(result) or 0.0,
    )


def codex_turn_usage(event: dict[str, Any]) -> Usage:
    """The tokens of one Codex ``turn.completed`` event (its ``input_tokens``
    include the cached ones: they are split out)."""
    u = event.get("usage") or {}
    cached = count(u.get("cached_input_tokens"))
    return Usage(
        input_tokens=max(0, count(u.get("input_tokens")) - cached),
        cache_read_tokens=cached,
        cache_write_tokens=count(u.get("cache_write_input_tokens")),
        output_tokens=count(u.get("output_tokens")),
    )


# A subscription CLI's usage or rate limit, in the words each prints it (see
# tests/fixtures/limits/, whose messages these patterns were written against):
# Claude Code's result text ("Claude AI usage limit reached|<epoch>" in older
# versions, "5-hour limit reached ∙ resets 3pm" / "You've hit your limit · resets
# 3pm (Europe/Berlin)" in newer ones, or api_error_status 429) and Codex's error
# events ("You've hit your usage limit. … try again at 3:04 PM." / "… try again
# in 2 days 3 hours", or "exceeded retry limit, last status: 429 Too Many Requests").
_LIMIT = lazy_compile(
    r"usage limit|(?:session|weekly|daily|5-hour|opus) limit|hit your (?:\w+ )?limit|"
    r"rate.?limit|429 Too Many Requests",
    re.IGNORECASE,
)
_EPOCH = lazy_compile(r"limit reached\|(?P<epoch>\d{9,11})")
_RESETS = lazy_compile(
    r"(?:resets?(?: at)?|try again (?:at|in))\s+(?P<when>[^.\n|]*[^.\s|])", re.IGNORECASE
)


def usage_limit(text: str) -> str | None:
    """``text`` (a CLI's error) read as a usage or rate limit: what it hit
    and, when the CLI says so, when the limit resets; None when it is no
    limit.  A limit is an environment fault: never a failure of the code."""
    if not text or not _LIMIT.search(text):
        return None
    epoch = _EPOCH.search(text)
    if epoch:
        when = datetime.fromtimestamp(int(epoch.group("epoch")), UTC).strftime("%Y-%m-%d %H:%M UTC")
        return f"a usage limit (it resets at {when})"
    resets = _RESETS.search(text)
    kind = (
        "a rate limit"
        if re.search(r"rate.?limit|429", text, re.IGNORECASE) and "usage" not in text.lower()
        else "a usage limit"
    )
    if resets:
        word = "in" if resets.group(0).lower().startswith("try again in") else "at"
        return f"{kind} (it resets {word} {resets.group('when').strip()})"
    return f"{kind} (the CLI does not say when it resets)"
