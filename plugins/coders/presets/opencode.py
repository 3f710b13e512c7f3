"""The ``opencode`` preset: ``opencode run --format json`` (JSON events:
``text``, ``step_finish`` with ``reason``, ``cost`` and ``tokens``,
``error``, each with ``sessionID``); a piped stdin is appended to the
message.  Reviewer: ``--agent plan`` with ``OPENCODE_PERMISSION`` denying
edit and bash.  Logged in: ``opencode auth list`` names a credential or a
provider's key in the environment.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.agent_clis import INSTALL, count, number
from stepkit.plugins.coders.presets.base import Call, Parsed, Preset, json_objects
from stepkit.plugins.coders.presets.login import Login
from stepkit.records import Usage
from stepkit.text import strip_ansi

_CREDENTIALS = lazy_compile(r"^\W*(\d+) (?:credentials?|environment variables?)\s*$", re.MULTILINE)
_REJECTED = lazy_compile(r"^.*permission requested: .*auto-rejecting.*$", re.MULTILINE)


def command(call: Call) -> str:
    return "opencode run --format json" + (" --agent plan" if call.review else "")


def env(call: Call) -> dict[str, str]:
    return (
        {"OPENCODE_PERMISSION": json.dumps({"edit": "deny", "bash": "deny"})} if call.review else {}
    )


def read(output: str, scratch: Path) -> Parsed | None:
    seen = False
    session_id = None
    texts: list[str] = []
    errors: list[str] = []
    usage = Usage()
    last_reason = None
    answered = False  # a text part after the last step that ended on tool calls
    for event in json_objects(output):
        kind = event.get("type")
        part = event.get("part") or {}
        session_id = session_id or event.get("sessionID")
        if kind == "text":
            texts.append(str(part.get("text") or ""))
            answered = True
        elif kind == "step_finish":
            last_reason = part.get("reason")
            answered = answered and last_reason != "tool-calls"
            tokens = part.get("tokens") or {}
            cache = tokens.get("cache") or {}
            usage = usage.add(
                Usage(
                    input_tokens=count(tokens.get("input")),
                    output_tokens=count(tokens.get("output")) + count(tokens.get("reasoning")),
                    cache_read_tokens=count(cache.get("read")),
                    cache_write_tokens=count(cache.get("write")),
                    cost_usd=number(part.get("cost")) or 0.0,
                )
            )
        elif kind == "error":
            error = event.get("error") or {}
            data = error.get("data") or {}
            errors.append(str(data.get("message") or error.get("name") or "error"))
        seen = seen or isinstance(kind, str)
    if not seen:
        return None
    rejected = [m.group(0).strip()[:300] for m in _REJECTED.finditer(output)]
    failed = None
    if last_reason == "tool-calls" and not answered:
        failed = "stopped after a tool call without answering" + (
            f" (a permission was auto-rejected: {rejected[-1]})" if rejected else ""
        )
    return Parsed(
        text="\n".join(texts),
        errors=tuple(errors),
        failed=failed,
        notes=tuple(f"auto-rejected: {r}" for r in rejected),
        usage=usage,
        cost_usd=usage.cost_usd,
        session_id=session_id,
    )


def read_login(exit_code: int | None, output: str) -> bool | None:
    """``opencode auth list`` counts the saved credentials (``└  1
    credentials``) and the providers' keys in the environment (``└  1
    environment variable``): any is a login.  None has no fail: opencode's
    own free models need none."""
    counts = [int(n) for n in _CREDENTIALS.findall(strip_ansi(output))]
    return True if exit_code == 0 and any(counts) else None


LOGIN = Login(("opencode", "auth", "list"), read_login, fix="run `opencode auth login`")

PRESET = Preset(
    "opencode",
    command,
    read,
    checked=("1.18.33",),
    install=INSTALL["opencode"],
    env=env,
    login=LOGIN,
)
