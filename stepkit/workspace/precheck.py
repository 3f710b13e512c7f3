"""The gate commands chosen before a step, checked before its coder starts.

Each command chosen for the step (:func:`~stepkit.workspace.gate_commands.start_commands`)
is looked at without running it: a plugin that knows it cannot run on this
machine (``stepkit_gate_fault``: a tox matrix with no environment for this
Python), or a program that is not on the gates' PATH nor a file of the
project (:func:`~stepkit.workspace.programs.missing_program`).  Such a
gate is an environment fault, and the run ends on it before the coder is
called: no coder can fix the machine, and no token is spent finding that
out.  A command detection chose that cannot start gives its place to the
gate's next candidate that can
(:func:`~stepkit.workspace.gate_commands.start_commands`), so only a gate
with none left, or the user's own command, ends the run.  What only running the command shows (a module the interpreter lacks,
no test found) is measured on the step's start while the coder works
(:mod:`stepkit.workspace.start_outcomes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pluggy

from stepkit.records import GateResult


def start_faults(
    settings: Mapping[str, object], pm: pluggy.PluginManager, project_dir: Path
) -> list[GateResult]:
    """The gates whose command, chosen before the step, cannot start here:
    one ``error`` result each, in gate order, naming why (none: all can)."""
    from stepkit.workspace.gate_commands import START_COMMANDS_KEY, cannot_start
    from stepkit.workspace.gates import skipped
    from stepkit.workspace.toolpath import tool_dirs

    chosen = settings.get(START_COMMANDS_KEY)
    if not isinstance(chosen, dict):
        return []
    dirs = tool_dirs(pm, project_dir)
    faults = []
    for gate, entry in chosen.items():
        command = entry.get("command") if isinstance(entry, dict) else None
        if not isinstance(command, str) or not command:
            continue
        why = cannot_start(pm, gate, command, project_dir, dirs)
        if why:
            faults.append(skipped(gate, command, entry.get("plugin"), "error", why))
    return faults
