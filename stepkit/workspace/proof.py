"""Every gate command proven on the project's HEAD, before the first step
(``stepkit init``): the start measure of :mod:`stepkit.workspace.start_outcomes`
run in this thread on the tree of HEAD, in the same scratch copy, sandbox
and cache.  Per gate, a :class:`~stepkit.workspace.baseline.BaselineRecord`:
it ran and passed, it ran and failed (failures already at HEAD), or it could
not run there, and why.  A first step that starts from HEAD finds them cached.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pluggy

from stepkit.config import Config
from stepkit.errors import UsageError
from stepkit.records import GateResult
from stepkit.workspace.baseline import BaselineRecord


def prove_on_head(
    pm: pluggy.PluginManager,
    project_dir: Path,
    config: Config,
    on_gate: Callable[[GateResult], None] = lambda result: None,
) -> tuple[dict[str, BaselineRecord], str | None]:
    """Run each gate's chosen command once on HEAD, in a scratch copy.

    :param on_gate: told each gate's result as soon as it ran (a progress line).
    :return: the records by gate, and why nothing (or not every gate) was
        proven (None: every command was measured).
    """
    from stepkit.workspace import sandbox
    from stepkit.workspace.baseline import ref_tree
    from stepkit.workspace.gate_commands import plan_gates
    from stepkit.workspace.gates import GateRunner
    from stepkit.workspace.start_outcomes import StartMeasure
    from stepkit.workspace.store import store_root

    try:
        tree = ref_tree(project_dir, "HEAD")
    except UsageError:
        return {}, "not a git repository with a commit: there is no HEAD to run them on"
    plan = plan_gates(pm, project_dir, config)
    chosen = {gate: p for gate, p in plan.commands.items() if p.command}

    told: set[str] = set()

    def tell(result: GateResult) -> None:
        told.add(result.name)
        on_gate(result)

    def measure(where: Path, log_dir: Path, names: list[str]) -> list[GateResult]:
        there = plan_gates(pm, where, config)
        there = there.model_copy(update={"commands": {**there.commands, **chosen}})
        runner = GateRunner(
            pm, where, config, log_dir, plan=there, tools_from=project_dir, on_gate=tell
        )
        return runner.run(names)

    def policy() -> sandbox.Policy | None:
        settings = config.sandbox
        return sandbox.policy_for(
            project_dir,
            store_root(project_dir),
            writable=settings.writable,
            readable=[*settings.readable, str(project_dir)],
            network=settings.network,
        )

    commands = {gate: p.command for gate, p in chosen.items() if p.command is not None}
    job = StartMeasure(project_dir, tree, commands, measure, policy)
    job.run()
    for gate, record in job.records.items():
        if gate not in told:  # measured before, on the same files: said as well
            summary = f"{record.summary} (measured earlier on the same files)"
            shown = {"name": gate, "status": record.status, "summary": summary.strip()}
            on_gate(GateResult.model_validate(shown))
    return job.records, job.problem
