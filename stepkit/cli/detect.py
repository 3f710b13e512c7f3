"""``stepkit detect``: which project types the plugins see, and for each gate
the command it would run, the plugin that chose it, and the other
candidates that take its place, in order, where it cannot run — nothing is
run."""

from __future__ import annotations

import argparse
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.shown import shown_json


def run(args: argparse.Namespace) -> int:
    """Print the detection report; 0 when the project could be inspected."""
    from stepkit.api import detect_gates

    data = detect_gates(args.project_dir, args.pm, disabled_plugins=disabled_plugins(args))
    print(shown_json(data, ensure_ascii=True) if args.json else render(data))
    return 0


def render(data: dict[str, Any]) -> str:
    """The report as text: one line per gate, then any plugin that failed to load."""
    from stepkit.workspace.gate_commands import has_files_placeholder

    types = data["project_types"]
    lines = [
        f"project: {data['project_dir']}",
        f"types:   {', '.join(types) + f' (primary: {types[0]})' if types else 'none detected'}",
    ]
    not_run = "no command — this gate will be NOT RUN"
    shown = [
        (g["name"], g["command"] or not_run, g["plugin"], g.get("source")) for g in data["gates"]
    ]
    width = max(len(text) for _, text, _, _ in shown)
    for (name, text, plugin, source), gate in zip(shown, data["gates"], strict=True):
        chooser = f"  [{plugin}]" if plugin else ""
        origin = f"  (from {source})" if source else ""
        lines.append(f"{name:<7} {text:<{width}}{chooser}{origin}".rstrip())
        for other in gate.get("candidates", ()):
            origin = f"  (from {other['source']})" if other.get("source") else ""
            lines.append(f"        else: {other['command']}  [{other['plugin']}]{origin}")
        if gate.get("fault"):
            lines.append(f"        cannot run here (an environment fault): {gate['fault']}")
    if data.get("tool_dirs"):
        lines.append(
            f"env:    {', '.join(data['tool_dirs'])} first on PATH (the project's own tools)"
        )
    lines += [f"note:   {note}" for note in data["notes"]]
    if data.get("order"):
        lines.append(
            f"order:  CI runs {' → '.join(data['order'])} (it builds before a format or lint step); "
            "the gates run in that order"
        )
    lines += [
        f"build system not supported: {name} — no gate runs its build or tests unless CI, a task runner or "
        "[tool.stepkit.commands] gives them"
        for name in data.get("unsupported", ())
    ]
    if has_files_placeholder(
        next((g["command"] for g in data["gates"] if g["name"] == "format"), None)
    ):
        lines.append(
            "{files}: the changed files (in a run the coder's, in verify the work tree's "
            "against HEAD); none changed: the formatter does not run"
        )
    for name, error in data["load_errors"].items():
        lines.append(f"plugin {name} failed to load and was skipped: {error}")
    return "\n".join(lines)
