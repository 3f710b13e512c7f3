"""``stepkit plugins``: every registered plugin with its origin, version and
the hooks it implements, every plugin that failed to load, the coding-CLI
presets with their CLI found on PATH (and its version) or how to install it
(and, for a preset a plugin registered, that plugin and the ones whose
preset of that name it replaced), and the engine kinds (``--engine``) the
plugins build."""

from __future__ import annotations

import argparse
from collections.abc import Collection
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.config import load_config, resolve_project_dir
from stepkit.pluginmanager import get_plugin_manager, get_plugins
from stepkit.presets import presets as registered_presets
from stepkit.presets import registrations
from stepkit.shown import shown_json


def run(args: argparse.Namespace) -> int:
    """Print the plugin table (or ``{"plugins": [...]}`` with ``--json``)."""
    project_dir = resolve_project_dir(args.project_dir)
    pm = args.pm or get_plugin_manager(
        project_dir, load_config(project_dir), disabled_plugins(args)
    )
    presets = preset_list(pm)
    plugins, engines = get_plugins(pm), engine_list(pm)
    if args.json:
        print(
            shown_json(
                {"plugins": plugins, "presets": presets, "engines": engines}, ensure_ascii=True
            )
        )
    else:
        builtins = {p["name"] for p in plugins if p["origin"] == "builtin"}
        print(
            render(plugins)
            + "\n\n"
            + render_presets(presets, builtins)
            + "\n\n"
            + render_engines(engines)
        )
    return 0


def preset_list(pm: Any) -> list[dict[str, Any]]:
    """Every preset row the plugins give (``stepkit_coder_presets``), built-ins
    first; a registered preset's row also names the ``plugin`` that
    registered it and the plugins it ``overrides``."""
    table = registrations(pm)
    rows = []
    for answer in reversed(pm.hook.stepkit_coder_presets(presets=registered_presets(pm))):
        for row in answer or ():
            registered = table.get(row["name"])
            if registered is not None:
                row = {
                    **row,
                    "plugin": registered.plugin,
                    "overrides": list(registered.overrides),
                }
            rows.append(row)
    return rows


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


def render_presets(presets: list[dict[str, Any]], builtins: Collection[str] = ()) -> str:
    """A table: preset, the CLI's version found on PATH (or how to install it),
    the versions the preset was checked against, and, for a preset that is
    not a built-in's or replaced another, the plugin that registered it and
    those it replaced (``builtins``: the built-in plugins' names)."""
    rows = [("PRESET", "CLI", "CHECKED AGAINST")]
    for preset in presets:
        if preset["path"] is None:
            found = f"not on PATH (install: {preset['install']})"
        else:
            found = f"{preset['version'] or 'unknown version'} ({preset['path']})"
            if not preset["checked_version"]:
                found += " [not a checked version]"
        checked = ", ".join(preset["checked"])
        plugin, overrides = preset.get("plugin"), preset.get("overrides") or []
        if plugin is not None and (overrides or plugin not in builtins):
            source = plugin + (f"; overrides {', '.join(overrides)}" if overrides else "")
            checked += f"  ({source})"
        rows.append((preset["name"], found, checked))
    width = max(len(row[0]) for row in rows)
    found_width = max(len(row[1]) for row in rows)
    return "\n".join(
        f"{name:<{width}}  {found:<{found_width}}  {checked}".rstrip()
        for name, found, checked in rows
    )
