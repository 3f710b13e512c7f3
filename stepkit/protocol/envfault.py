"""The reason a run gives for an environment fault: the machine, not the
code, and where the gate's command is set by hand."""

from __future__ import annotations

from typing import Any

from stepkit.records import GateResult


def environment_fault_reason(gate: GateResult, pm: Any = None) -> str:
    """``Environment fault: <gate>: <cause>`` and what the user can do about
    it, naming where the gate's command is set by hand as ``pm``'s
    ``stepkit_command_override_names`` says (None: the built-in plugins')."""
    from stepkit.pluginmanager import get_plugin_manager
    from stepkit.workspace.worktree_record import UNPREPARED

    if gate.summary.startswith(UNPREPARED):  # the summary names its fix
        return (
            f"Environment fault: {gate.name}: {gate.summary}. This is the machine, not the "
            f"code: no fix attempt was spent. Fix that, then run the step again."
        )
    pm = pm if pm is not None else get_plugin_manager()
    names = pm.hook.stepkit_command_override_names(gate=gate.name)
    where = (
        f'{names[0]}, or {names[1]} = "…" under [tool.stepkit.commands] in pyproject.toml, '
        f"[commands] in stepkit.toml, or stepconf.py"
        if names
        else "in stepconf.py"
    )
    return (
        f"Environment fault: {gate.name}: {gate.summary or 'the command could not run'}. "
        f"This is the machine, not the code: no fix attempt was spent. Install what is missing "
        f"(or make it reachable), or set the {gate.name} command ({where}), "
        f"then run the step again."
    )
