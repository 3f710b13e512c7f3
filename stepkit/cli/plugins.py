"""``stepkit plugins``: every registered plugin with its origin, version and
the hooks it implements, and every plugin that failed to load."""

from __future__ import annotations

import argparse
import json
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.config import load_config, resolve_project_dir
from stepkit.pluginmanager import get_plugin_manager, get_plugins


def run(args: argparse.Namespace) -> int:
    """Print the plugin table (or ``{"plugins": [...]}`` with ``--json``)."""
    project_dir = resolve_project_dir(args.project_dir)
    pm = args.pm or get_plugin_manager(project_dir, load_config(project_dir), disabled_plugins(args))
    plugins = get_plugins(pm)
    print(json.dumps({"plugins": plugins}, indent=2) if args.json else render(plugins))
    return 0


def render(plugins: list[dict[str, Any]]) -> str:
    """A table: name, origin, version, hooks (``stepkit_`` prefix dropped)."""
    rows = [("NAME", "ORIGIN", "VERSION", "HOOKS")]
    for plugin in plugins:
        if "error" in plugin:
            hooks = f"FAILED TO LOAD: {plugin['error']}"
        else:
            hooks = ", ".join(h.removeprefix("stepkit_") for h in plugin["hooks"]) or "(none)"
        rows.append((plugin["name"], plugin["origin"], plugin["version"] or "-", hooks))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        f"{name:<{widths[0]}}  {origin:<{widths[1]}}  {version:<{widths[2]}}  {hooks}".rstrip()
        for name, origin, version, hooks in rows
    )
