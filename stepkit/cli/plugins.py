"""``stepkit plugins``: every registered plugin with its origin, version and
the hooks it implements, every plugin that failed to load, the coding-CLI
presets with their CLI found on PATH (and its version) or how to install it,
and the engine kinds (``--engine``) the plugins build."""

from __future__ import annotations

import argparse
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.config import load_config, resolve_project_dir
from stepkit.pluginmanager import get_plugin_manager, get_plugins
from stepkit.shown import shown_json


def run(args: argparse.Namespace) -> int:
    """Print the plugin table (or ``{"plugins": [...]}`` with ``--json``)."""
    project_dir = resolve_project_dir(args.project_dir)
    pm = args.pm or get_plugin_manager(
        project_dir, load_config(project_dir), disabled_plugins(args)
    )
    presets = [
        row for rows in reversed(pm.hook.stepkit_coder_presets()) for row in rows or ()
    ]  # built-ins first
    plugins, engines = get_plugins(pm), engine_list(pm)
    if args.json:
        print(
            shown_json(
                {"plugins": plugins, "presets": presets, "engines": engines}, ensure_ascii=True
            )
        )
    else:
        print(render(plugins) + "\n\n" + render_presets(presets) + "\n\n" + render_engines(engines))
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
    rows = [("ENGINE", "PLUGIN", "DESCRIPTION")] + [
        (e["usage"], e["plugin"], e["description"]) for e in engines
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    return "\n".join(
        f"{usage:<{widths[0]}}  {plugin:<{widths[1]}}  {text}".rstrip()
        for usage, plugin, text in rows
    )


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


def render_presets(presets: list[dict[str, Any]]) -> str:
    """A table: preset, the CLI's version found on PATH (or how to install it),
    the versions the preset was checked against."""
    rows = [("PRESET", "CLI", "CHECKED AGAINST")]
    for preset in presets:
        if preset["path"] is None:
            found = f"not on PATH (install: {preset['install']})"
        else:
            found = f"{preset['version'] or 'unknown version'} ({preset['path']})"
            if not preset["checked_version"]:
                found += " [not a checked version]"
        rows.append((preset["name"], found, ", ".join(preset["checked"])))
    width = max(len(row[0]) for row in rows)
    found_width = max(len(row[1]) for row in rows)
    return "\n".join(
        f"{name:<{width}}  {found:<{found_width}}  {checked}".rstrip()
        for name, found, checked in rows
    )
