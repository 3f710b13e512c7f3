"""The ``codex`` preset: ``codex exec --json --skip-git-repo-check -`` with
``--sandbox workspace-write`` (reviewer: ``read-only``; inside stepkit's
own sandbox ``danger-full-access``, see :func:`~stepkit.plugins.agent_clis.codex_sandbox`).  JSONL events:
``thread.started``, ``item.completed`` (``agent_message``; ``error`` items
are warnings, e.g. missing model metadata), ``turn.completed`` (its
``usage``) / ``turn.failed``, and ``error`` (a retry notice when a
``turn.completed`` follows).  Codex reports tokens, not cost.  Asked for a
structured answer (the reviewer's findings), it gets ``--output-schema``
(a strict schema file in the call's scratch dir) and its last message is
that JSON object.  Logged in: ``codex login status`` (exit 0), or
CODEX_API_KEY / OPENAI_API_KEY.
"""

from __future__ import annotations

import json
from pathlib import Path

from stepkit import quoting
from stepkit.plugins.agent_clis import INSTALL, codex_sandbox, codex_turn_usage, usage_limit
from stepkit.plugins.coders.presets.base import Call, Parsed, Preset, json_objects
from stepkit.plugins.coders.presets.login import Login
from stepkit.records import Usage


def command(call: Call) -> str:
    sandbox = codex_sandbox(write=not call.review)
    schema = ""
    if call.answer_schema is not None:
        from stepkit.plugins.llm.strict_schema import strict_json_schema  # only a review asks

        path = call.scratch / "answer-schema.json"
        path.write_text(json.dumps(strict_json_schema(call.answer_schema)), encoding="utf-8")
        schema = quoting.shell(["--output-schema", str(path)]) + " "
    return f"codex exec --sandbox {sandbox} --json {schema}--skip-git-repo-check -"


def read(output: str, scratch: Path) -> Parsed | None:
    seen = False
    session_id = None
    messages: list[str] = []
    errors: list[str] = []
    notes: list[str] = []
    pending: list[str] = []  # error events: retry notices unless no turn completes after them
    usage = Usage()
    for event in json_objects(output):
        kind = event.get("type")
        item = event.get("item") or {}
        if kind == "thread.started":
            session_id = event.get("thread_id")
        elif kind == "item.completed" and item.get("type") == "agent_message":
            messages.append(str(item.get("text") or ""))
        elif kind == "item.completed" and item.get("type") == "error":
            notes.append(f"warning: {item.get('message') or 'error item'}")
        elif kind == "turn.completed":
            notes.extend(f"retried: {p}" for p in pending)
            pending = []
            usage = usage.add(codex_turn_usage(event))
        elif kind == "turn.failed":
            pending = []
            errors.append(str((event.get("error") or {}).get("message") or "turn failed"))
        elif kind == "error":
            pending.append(str(event.get("message") or "error"))
        seen = seen or isinstance(kind, str)
    if not seen:
        return None
    failures = errors + pending
    return Parsed(
        text=messages[-1] if messages else "",
        errors=tuple(failures),
        notes=tuple(notes),
        usage=usage,
        session_id=session_id,
        limit=next(filter(None, map(usage_limit, reversed(failures))), None),
    )


def read_login(exit_code: int | None, output: str) -> bool | None:
    """``codex login status`` says on stderr ``Logged in using ChatGPT`` (or
    ``… an API key - sk-…``) and exits 0, or ``Not logged in`` and exits 1."""
    if "Not logged in" in output:
        return False
    if exit_code == 0 and "Logged in" in output:
        return True
    return None


LOGIN = Login(
    ("codex", "login", "status"),
    read_login,
    keys=("CODEX_API_KEY", "OPENAI_API_KEY"),
    fix="run `codex login`",
)

PRESET = Preset("codex", command, read, checked=("0.171.0",), install=INSTALL["codex"], login=LOGIN)
