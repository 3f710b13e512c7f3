"""cargo, and the rustc and clippy diagnostics it prints: ``--message-format=json``
items, the human format (``error[E0308]: message`` over ``--> path``, the
lint named in a note under it), clippy's configuration, the registry it
cannot reach and its lockfile."""

from __future__ import annotations

import re
from typing import Any

from stepkit.workspace.diagnostics import Diagnostic, level
from stepkit.workspace.tools import Fault, Tool


def _json_item(item: dict[str, Any]) -> list[Diagnostic] | None:
    """A ``compiler-message`` at its primary span."""
    if item.get("reason") != "compiler-message" or not isinstance(item.get("message"), dict):
        return None
    message = item["message"]
    spans = [s for s in message.get("spans") or [] if isinstance(s, dict)]
    primary = next((s for s in spans if s.get("is_primary")), spans[0] if spans else {})
    code = (message.get("code") or {}).get("code") or ""
    if not primary:
        return []
    return [
        Diagnostic(
            str(primary.get("file_name", "")),
            code,
            str(message.get("message", "")),
            level(str(message.get("level", ""))),
        )
    ]


def _registry_unreachable(m: re.Match[str], lines: list[str], at: int) -> str | None:
    # "error: failed to get `serde` as a dependency of package …" / … / "Caused by:" /
    # "  [6] Could not resolve hostname (Could not resolve host: index.crates.io)"
    if not any(
        re.match(r"^error: failed to (?:get|download|load|query|update|fetch)\b", line)
        for line in lines
    ):
        return None
    return f"cargo: registry unreachable ({m['why']})"


TOOLS = (
    Tool(
        name="cargo",
        json_item=_json_item,
        heads=(r"^(?P<level>error|warning|note|help)(?:\[(?P<code>[^\]]+)\])?: (?P<msg>.+)$",),
        rule_notes=(
            r"^\s*= note: `[#-]\[?(?:deny|warn)\((?P<rule>[\w:]+)\)\]?` on by default",
            r"^\s*= note: `-D (?P<rule>[\w:-]+)` implied by",
        ),
        configs=(r"\.?clippy\.toml",),
        faults=(
            Fault(
                r"(?P<why>Could not resolve host(?:name)?(?: \(Could not resolve host: [^)]+\)|: \S+)"
                r"|Couldn't resolve host name)",
                _registry_unreachable,
            ),
        ),
        lockfiles=("Cargo.lock",),
    ),
)
