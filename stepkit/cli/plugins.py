"""``stepkit plugins``: every registered plugin with its origin, version and
the hooks it implements, every plugin that failed to load, and the engine
kinds (``--engine``) the plugins build."""

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
    engines = engine_list(pm)
    if args.json:
        print(json.dumps({"plugins": plugins, "engines": engines}, indent=2))
    else:
        print(render(plugins))
        print("\n" + render_engines(engines))
    return 0


def engine_list(pm: Any) -> list[dict[str, str]]:
    """Every engine kind: ``usage`` (``claude[:MODEL]``), ``description`` and
    the ``plugin`` that names it, built-ins first."""
    engines = []
    for impl in reversed(pm.hook.stepkit_engine_kinds.get_hookimpls()):
        for usage, description in (impl.function() or {}).items():
            engines.append({"usage": usage, "description": description, "plugin": impl.plugin_name})
    return engines


def render_engines(engines: list[dict[str, str]]) -> str:
    """A table: engine usage, plugin, description."""
    rows = [("ENGINE", "PLUGIN", "DESCRIPTION")] + [(e["usage"], e["plugin"], e["description"]) for e in engines]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    return "\n".join(f"{usage:<{widths[0]}}  {plugin:<{widths[1]}}  {text}".rstrip() for usage, plugin, text in rows)


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
