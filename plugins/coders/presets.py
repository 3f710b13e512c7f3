"""Presets for well-known coding CLIs: a command line and a parser each.

Every preset runs through the command coder's runner (prompt on stdin and in
``STEPKIT_PROMPT_FILE``, STEPKIT_* env, timeout with process-group kill) and
turns the tool's own output into the same :class:`CoderResult`: the result
text, errors, cost and session id where the tool reports them.  A crash of
the process wins, then a sentinel line in the tool's final text, then the
tool's own error report (CODER_FAILED), then the exit code.

Flags, as documented by each tool:

- ``claude``: ``-p`` (print mode, prompt from stdin), ``--output-format json``
  (one result object: ``result``, ``is_error``, ``subtype``,
  ``total_cost_usd``, ``session_id``), ``--permission-mode acceptEdits``,
  ``--max-turns N``, ``--max-budget-usd X`` (print mode only).
- ``codex``: ``codex exec`` with ``-`` (prompt from stdin), ``--sandbox
  workspace-write``, ``--json`` (JSONL events: ``thread.started``,
  ``item.completed`` with ``agent_message`` / ``error`` items,
  ``turn.completed`` / ``turn.failed``, ``error``), ``--skip-git-repo-check``
  so non-git projects work.  Codex reports tokens, not cost.
- ``aider``: ``--message-file FILE``, ``--yes-always``, ``--no-auto-commits``
  (the scope guard needs the changes in the work tree), ``--no-pretty``,
  ``--no-stream``; it prints ``Cost: $X message, $Y session.``
- ``opencode``: ``opencode run --format json`` (JSON events: ``text``,
  ``step_finish`` with ``part.cost``, ``error``, each with ``sessionID``); a
  piped stdin is appended to the message.

Reviewer variants are read-only: claude ``--permission-mode plan``, codex
``--sandbox read-only``, aider ``--dry-run``, opencode ``--agent plan``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from stepkit.plugins.coders.command import find_sentinel, generic_result
from stepkit.records import CoderResult
from stepkit.workspace.process import ProcessResult

DEFAULT_MAX_TURNS = 60
DEFAULT_MAX_BUDGET_USD = 10.0


@dataclass(frozen=True)
class Parsed:
    """What a tool's own output said."""

    text: str
    errors: tuple[str, ...] = ()
    cost_usd: float | None = None
    session_id: str | None = None


@dataclass(frozen=True)
class Preset:
    """A coding CLI: how to call it and how to read its output."""

    name: str
    #: ``command(settings, review=...)``: the shell command line
    #: (``review``: the read-only variant).
    command: Callable[..., str]
    reader: Callable[[str], Parsed | None]

    def read(self, output: str) -> Parsed | None:
        """What the tool's output says; None when it is empty or not in the
        tool's format."""
        return self.reader(output) if output.strip() else None

    def parse(self, run: ProcessResult, stream_sentinel: str | None) -> CoderResult:
        """Turn one run of the tool into a :class:`CoderResult`
        (``stream_sentinel``: the last sentinel line of its raw output, which
        decides when its format cannot be read)."""
        parsed = self.read(run.output)
        crashed = run.crash() is not None
        if crashed or parsed is None:
            result = generic_result(run, stream_sentinel)
            if not crashed:
                result.text += f"\n[stepkit: could not read {self.name}'s output format; judged by exit code]"
            return result
        sentinel = find_sentinel(parsed.text)
        note = None
        if sentinel is None:
            if parsed.errors or run.exit_code != 0:
                sentinel = "CODER_FAILED"
                note = f"[stepkit: no sentinel; {self.name} reported an error (exit code {run.exit_code})]"
            else:
                sentinel = "CODER_COMPLETE"
                note = f"[stepkit: no sentinel; {self.name} finished without error]"
        errors = "\n".join(f"error: {e}" for e in parsed.errors)
        text = "\n".join(p for p in (parsed.text.strip(), errors, note) if p)
        return CoderResult(sentinel=sentinel, sentinel_inferred=note is not None, text=text,
                           exit_code=run.exit_code, log=run.log, cost_usd=parsed.cost_usd,
                           session_id=parsed.session_id)


# -- claude --------------------------------------------------------------------


def _claude_command(settings: dict[str, Any], review: bool) -> str:
    turns = int(settings.get("coder_max_turns") or DEFAULT_MAX_TURNS)
    budget = float(settings.get("coder_max_budget_usd") or DEFAULT_MAX_BUDGET_USD)
    mode = "plan" if review else "acceptEdits"
    return (f"claude -p --output-format json --permission-mode {mode} "
            f"--max-turns {turns} --max-budget-usd {budget:g}")


def _claude_read(output: str) -> Parsed | None:
    result = None
    for event in _json_objects(output):
        if event.get("type") == "result" or "is_error" in event:
            result = event
    if result is None:
        return None
    errors = [str(e) for e in result.get("errors") or []]
    subtype = str(result.get("subtype") or "")
    if result.get("is_error") or (subtype and subtype != "success"):
        errors.insert(0, f"{subtype or 'error'}: {result.get('result') or 'claude reported an error'}")
    text = str(result.get("result") or "")
    denials = result.get("permission_denials") or []
    if denials:  # worth knowing (e.g. tests it could not run), not a failure by itself
        text += f"\n[claude: {len(denials)} tool call(s) were denied permission]"
    return Parsed(text=text, errors=tuple(errors),
                  cost_usd=_number(result.get("total_cost_usd", result.get("cost_usd"))),
                  session_id=result.get("session_id"))


# -- codex ---------------------------------------------------------------------


def _codex_command(settings: dict[str, Any], review: bool) -> str:
    sandbox = "read-only" if review else "workspace-write"
    return f"codex exec --sandbox {sandbox} --json --skip-git-repo-check -"


def _codex_read(output: str) -> Parsed | None:
    seen = False
    session_id = None
    messages: list[str] = []
    errors: list[str] = []
    for event in _json_objects(output):
        kind = event.get("type")
        item = event.get("item") or {}
        if kind == "thread.started":
            session_id = event.get("thread_id")
        elif kind == "item.completed" and item.get("type") == "agent_message":
            messages.append(str(item.get("text") or ""))
        elif kind == "item.completed" and item.get("type") == "error":
            errors.append(str(item.get("message") or "error"))
        elif kind == "turn.failed":
            errors.append(str((event.get("error") or {}).get("message") or "turn failed"))
        elif kind == "error":
            errors.append(str(event.get("message") or "error"))
        seen = seen or isinstance(kind, str)
    if not seen:
        return None
    return Parsed(text=messages[-1] if messages else "", errors=tuple(errors), session_id=session_id)


# -- aider ---------------------------------------------------------------------

_AIDER_COST = re.compile(r"Cost: \$(?P<message>[\d.]+) message, \$(?P<session>[\d.]+) session")
_AIDER_ERROR = re.compile(r"^(litellm\.\w*Error\b.*|\w*(API|Authentication|RateLimit)Error: .*)$", re.MULTILINE)


def _aider_command(settings: dict[str, Any], review: bool) -> str:
    extra = " --dry-run" if review else ""
    return ('aider --message-file "$STEPKIT_PROMPT_FILE" --yes-always --no-auto-commits '
            f"--no-pretty --no-stream --no-check-update{extra}")


def _aider_read(output: str) -> Parsed:
    costs = _AIDER_COST.findall(output)
    return Parsed(
        text=output,
        errors=tuple(m.group(0).strip() for m in _AIDER_ERROR.finditer(output)),
        cost_usd=float(costs[-1][1]) if costs else None,
    )


# -- opencode ------------------------------------------------------------------


def _opencode_command(settings: dict[str, Any], review: bool) -> str:
    extra = " --agent plan" if review else ""
    return f"opencode run --format json{extra}"


def _opencode_read(output: str) -> Parsed | None:
    seen = False
    session_id = None
    texts: list[str] = []
    errors: list[str] = []
    cost = 0.0
    for event in _json_objects(output):
        kind = event.get("type")
        part = event.get("part") or {}
        session_id = session_id or event.get("sessionID")
        if kind == "text":
            texts.append(str(part.get("text") or ""))
        elif kind == "step_finish":
            cost += _number(part.get("cost")) or 0.0
        elif kind == "error":
            error = event.get("error") or {}
            data = error.get("data") or {}
            errors.append(str(data.get("message") or error.get("name") or "error"))
        seen = seen or isinstance(kind, str)
    if not seen:
        return None
    return Parsed(text="\n".join(texts), errors=tuple(errors), cost_usd=round(cost, 6),
                  session_id=session_id)


# -- shared --------------------------------------------------------------------


def _json_objects(output: str) -> Iterator[dict[str, Any]]:
    """JSON objects in the output: the whole text, or one per line."""
    stripped = output.strip()
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        yield whole
        return
    for line in stripped.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                yield value


def _number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


PRESETS: dict[str, Preset] = {
    "claude": Preset("claude", _claude_command, _claude_read),
    "codex": Preset("codex", _codex_command, _codex_read),
    "aider": Preset("aider", _aider_command, _aider_read),
    "opencode": Preset("opencode", _opencode_command, _opencode_read),
}
