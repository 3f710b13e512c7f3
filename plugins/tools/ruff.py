"""ruff: its ``--output-format=json``/``json-lines`` items, its full and
concise text (``F401 [*] message`` over ``--> path:line:col``), its
configuration and its word for "no file to format"."""

from __future__ import annotations

from typing import Any

from stepkit.plugins.tools._python import SHARED_CONFIGS, invocations
from stepkit.workspace.diagnostics import Diagnostic
from stepkit.workspace.tools import Tool


def _json_item(item: dict[str, Any]) -> list[Diagnostic] | None:
    if not ("filename" in item and "code" in item and "message" in item):
        return None
    return [Diagnostic(str(item["filename"]), str(item.get("code") or ""), str(item["message"]))]


TOOLS = (
    Tool(
        name="ruff",
        json_item=_json_item,
        heads=(
            r"^(?P<code>[A-Z]+\d+|invalid-syntax|[a-z]+(?:-[a-z]+)+) (?:\[\*\] )?(?P<msg>\S.*)$",
        ),
        configs=(r"\.?ruff\.toml",),
        shared_configs=SHARED_CONFIGS,
        sections=("ruff",),
        nothing_to_format=(r"^warning: No Python files found under the given path\(s\)",),
        per_file=True,
        invocations=invocations("ruff check"),
        file_kinds=(".py", ".pyi", ".ipynb"),
        flags=(
            *("--fix", "--no-fix", "--unsafe-fixes", "--no-unsafe-fixes", "--fix-only"),
            *("--show-fixes", "--no-show-fixes", "--preview", "--no-preview", "--exit-zero"),
            *("--exit-non-zero-on-fix", "--statistics", "--no-cache", "--isolated"),
            *("--force-exclude", "--no-force-exclude", "-e", "-n", "-q", "-s", "-v"),
            *("--quiet", "--silent", "--verbose"),
        ),
        explicit_files=("--force-exclude",),
    ),
)
