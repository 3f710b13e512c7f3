"""mypy: its ``-O json`` items, the ``[code]`` ending a text line, the
marker that silences it and its configuration.  Read before eslint: a
trailing ``[…]`` is mypy's code wherever both would read it."""

from __future__ import annotations

from typing import Any

from stepkit.plugins.tools._python import SHARED_CONFIGS
from stepkit.workspace.diagnostics import Diagnostic, level
from stepkit.workspace.tools import Tool


def _json_item(item: dict[str, Any]) -> list[Diagnostic] | None:
    if not ("file" in item and "severity" in item and "message" in item):
        return None
    return [
        Diagnostic(
            str(item["file"]),
            str(item.get("code") or ""),
            str(item["message"]),
            level(str(item["severity"])),
        )
    ]


TOOLS = (
    Tool(
        name="mypy",
        before=("eslint",),
        json_item=_json_item,
        trailing_rules=(r"\s+\[(?P<rule>[\w/@.-]+)\]$",),
        silencers=(("# type: ignore", r"#\s*type:\s*ignore"),),
        configs=(r"\.?mypy\.ini",),
        shared_configs=SHARED_CONFIGS,
        sections=("mypy",),
    ),
)
