"""``stepkit detect``: which project types the plugins see, and for each gate
the command it would run and the plugin that chose it — nothing is run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.config import load_config
from stepkit.detect import GATE_HOOKS, project_types, resolve_command
from stepkit.errors import UsageError
from stepkit.pluginmanager import get_plugin_manager


def run(args: argparse.Namespace) -> int:
    """Print the detection report; 0 when the project could be inspected."""
    project_dir = Path(args.project_dir).resolve()
    if not project_dir.is_dir():
        raise UsageError(f"project dir {args.project_dir} is not a directory")
    data = report(args, project_dir)
    print(json.dumps(data, indent=2) if args.json else render(data))
    return 0


def report(args: argparse.Namespace, project_dir: Path) -> dict[str, Any]:
    """The ``--json`` object: project dir, project types, gates, plugin load errors."""
    config = load_config(project_dir)
    pm = get_plugin_manager(project_dir, config, disabled_plugins(args))
    gates = []
    for gate in GATE_HOOKS:
        command, plugin = resolve_command(pm, gate, project_dir, config)
        gates.append({"name": gate, "command": command, "plugin": plugin})
    return {
        "project_dir": str(project_dir),
        "project_types": project_types(pm, project_dir),
        "gates": gates,
        "load_errors": dict(pm.load_errors),
    }


def render(data: dict[str, Any]) -> str:
    """The report as text: one line per gate, then any plugin that failed to load."""
    types = data["project_types"]
    lines = [
        f"project: {data['project_dir']}",
        f"types:   {', '.join(types) + f' (primary: {types[0]})' if types else 'none detected'}",
    ]
    not_run = "no command — this gate will be NOT RUN"
    shown = [(g["name"], g["command"] or not_run, g["plugin"]) for g in data["gates"]]
    width = max(len(text) for _, text, _ in shown)
    for name, text, plugin in shown:
        chooser = f"  [{plugin}]" if plugin else ""
        lines.append(f"{name:<7} {text:<{width}}{chooser}".rstrip())
    for name, error in data["load_errors"].items():
        lines.append(f"plugin {name} failed to load and was skipped: {error}")
    return "\n".join(lines)
