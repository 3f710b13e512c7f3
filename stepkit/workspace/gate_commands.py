"""Resolve each gate's command through the project hooks, and the project types.

The one place that maps a gate to its hook, turns a plugin's ``""`` ("no
command for this gate") into None, and records which plugin chose.  Used by
``stepkit detect``, the gate runner and :mod:`stepkit.testing`.
"""

from __future__ import annotations

from pathlib import Path

import pluggy

from stepkit.config import Config
from stepkit.errors import PluginError
from stepkit.pluginmanager import first_answer

#: Each gate, in the order the gates run, and the firstresult hook that names its command.
GATE_HOOKS: dict[str, str] = {
    "format": "stepkit_format_command",
    "lint": "stepkit_lint_command",
    "build": "stepkit_build_command",
    "tests": "stepkit_test_command",
}


def resolve_command(
    pm: pluggy.PluginManager, gate: str, project_dir: Path, config: Config
) -> tuple[str | None, str | None]:
    """Ask the plugins for ``gate``'s command without running it.

    :param gate: ``format``, ``lint``, ``build`` or ``tests``.
    :return: ``(command, plugin)``.  ``command`` is None when the gate has no
        command; ``plugin`` names the plugin that answered — also when it
        answered ``""`` (it decided there is none) — and is None when no
        plugin had an opinion.
    :raises ValueError: ``gate`` is not one of the four gates.
    :raises PluginError: the answering plugin returned something other than a string.
    """
    if gate not in GATE_HOOKS:
        raise ValueError(f"unknown gate {gate!r}; expected one of {', '.join(GATE_HOOKS)}")
    command, plugin = first_answer(pm, GATE_HOOKS[gate], project_dir=project_dir, config=config)
    if command is not None and not isinstance(command, str):
        kind = type(command).__name__
        raise PluginError(f"plugin {plugin!r}: {GATE_HOOKS[gate]} returned {kind}, not a string")
    command = command.strip() if command else None
    return command or None, plugin


def resolve_commands(pm: pluggy.PluginManager, project_dir: Path, config: Config) -> dict[str, tuple[str | None, str | None]]:
    """Every gate's ``(command, plugin)`` (see :func:`resolve_command`), in gate order."""
    return {gate: resolve_command(pm, gate, project_dir, config) for gate in GATE_HOOKS}


def project_types(pm: pluggy.PluginManager, project_dir: Path) -> list[str]:
    """The project types the plugins recognise, in call order (the first is the primary)."""
    types: list[str] = []
    for name in pm.hook.stepkit_detect_project(project_dir=project_dir):
        if name not in types:
            types.append(name)
    return types
