"""eslint: its ``-f json`` items, the compact, unix and stylish formats,
the comments that silence it and its configuration (``package.json``
holds one too)."""

from __future__ import annotations

from typing import Any

from stepkit.workspace.diagnostics import Diagnostic
from stepkit.workspace.tools import Tool


def _json_item(item: dict[str, Any]) -> list[Diagnostic] | None:
    if "filePath" not in item or not isinstance(item.get("messages"), list):
        return None
    return [
        Diagnostic(
            item["filePath"],
            str(m.get("ruleId") or ""),
            str(m.get("message", "")),
            "error" if m.get("severity") == 2 or m.get("fatal") else "warning",
        )
        for m in item["messages"]
        if isinstance(m, dict)
    ]


TOOLS = (
    Tool(
        name="eslint",
        json_item=_json_item,
        lines=(
            (
                r"^(?P<file>\S.*?): line \d+, col \d+, (?P<level>Error|Warning) - (?P<msg>.+?)"
                r"(?: \((?P<rule>[\w/@.-]+)\))?$"
            ),
        ),
        under_file=(
            r"^\s+\d+:\d+\s+(?P<level>error|warning)\s+(?P<msg>.+?)(?:\s{2,}(?P<rule>[@\w/.-]+))?\s*$",
        ),
        trailing_rules=(r"\s+\[(?:Error|Warning)/(?P<rule>[\w/@.-]+)\]$",),
        silencers=(("eslint-disable", r"eslint-disable"),),
        configs=(r"\.eslintrc(\.\w+)?", r"eslint\.config\.\w+", r"package\.json"),
        per_file=True,
        invocations=("eslint", "npx eslint", "npx --no-install eslint", "pnpm exec eslint"),
        file_kinds=(".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"),
        flags=("--fix", "--cache", "--quiet", "--fix-dry-run", "--color", "--no-color"),
    ),
)
