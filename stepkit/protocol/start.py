"""The step's start, as the nodes read it: where the run keeps the
step-start snapshot, the snapshot itself, and the measure of the start
(:mod:`stepkit.workspace.start_outcomes`), begun once the orientation has
snapshotted the start and read by the gates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.protocol.state import step_state
from stepkit.records import GateResult, StageContext


def scope_path(ctx: StageContext) -> Path | None:
    """Where the run keeps the step-start snapshot (None: no run dir)."""
    return ctx.run_dir / "scope_snapshot.json" if ctx.run_dir else None


def start_snapshot(ctx: StageContext):
    """The step-start snapshot (None: the run kept none, or it was altered)."""
    from stepkit.workspace.scope import load_snapshot

    path = scope_path(ctx)
    if path is None:
        return None
    return load_snapshot(path, step_state(ctx).scope_snapshot_digest)


def start_measure(ctx: StageContext, snapshot: Any = None) -> Any:
    """The measure of the step's start (:mod:`stepkit.workspace.start_outcomes`):
    the one this process runs, else one started now; None without a run,
    a step-start snapshot or the commands chosen before the step."""
    from stepkit.protocol.watched import node_policy
    from stepkit.workspace.baseline import snapshot_tree
    from stepkit.workspace.gate_commands import (
        START_COMMANDS_KEY,
        PlannedCommand,
        fingerprint_taken,
        plan_gates,
    )
    from stepkit.workspace.gates import GateRunner
    from stepkit.workspace.start_outcomes import begin

    snapshot = snapshot if snapshot is not None else start_snapshot(ctx)
    chosen = ctx.settings.get(START_COMMANDS_KEY)
    if snapshot is None or ctx.run_dir is None or not isinstance(chosen, dict):
        return None
    planned = {
        gate: PlannedCommand(command=entry["command"], plugin=entry.get("plugin"))
        for gate, entry in chosen.items()
        if isinstance(entry, dict) and isinstance(entry.get("command"), str) and entry["command"]
    }
    if not planned:
        return None

    def measure(where: Any, log_dir: Any, names: list[str]) -> list[GateResult]:
        fingerprint_taken(ctx.settings)  # the tools as they were before any command ran
        plan = plan_gates(ctx.pm, where, ctx.config)
        plan = plan.model_copy(update={"commands": {**plan.commands, **planned}})
        runner = GateRunner(
            ctx.pm, where, ctx.config, log_dir, plan=plan, tools_from=Path(ctx.project_dir)
        )
        return runner.run(names)

    def listing(where: Any, log_dir: Any) -> list[str] | None:
        from stepkit.workspace.testlisting import list_tests

        fingerprint_taken(ctx.settings)
        return list_tests(ctx.pm, where, commands["tests"], log_dir, ctx.config)

    commands = {gate: p.command for gate, p in planned.items() if p.command is not None}
    return begin(
        ctx.project_dir,
        snapshot_tree(snapshot),
        commands,
        measure,
        lambda: node_policy(ctx),
        str(ctx.run_dir),
        listing if "tests" in commands else None,
    )
