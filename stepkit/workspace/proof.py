"""Every gate command proven on the project's HEAD, before the first step
(``stepkit init``): the start measure of :mod:`stepkit.workspace.start_outcomes`
run in this thread on the tree of HEAD, in the same scratch copy, sandbox
and cache.  Per gate, a :class:`~stepkit.workspace.baseline.BaselineRecord`:
it ran and passed, it ran and failed (failures already at HEAD), or it could
not run there, and why.  A first step that starts from HEAD finds them cached.

A command that could not run gives its place to the gate's next candidate
(:func:`~stepkit.workspace.gate_commands.candidates`), proven the same way,
until one runs or none is left; then ``choose`` (a question on a terminal)
may name another.  A format command that names the step's files
(``{files}``) is proven on the files of HEAD, as many as
:data:`PROOF_FILES`: whether it can run is what is asked, not what a step
would change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pluggy

from stepkit.config import Config
from stepkit.errors import UsageError
from stepkit.records import GateResult
from stepkit.workspace.baseline import BaselineRecord

#: the files of HEAD a ``{files}`` command is proven on, at most
PROOF_FILES = 50

#: ``choose(gate, tried)``: a command to prove for ``gate`` after every
#: candidate failed (``tried``: each ``(command, why)``), ``(command, True)``
#: to keep one of them as it is, or None to leave the gate without one
Choose = Callable[[str, list[tuple[str, str]]], tuple[str, bool] | None]


@dataclass
class Proof:
    """What :func:`prove_on_head` found."""

    #: the record of each gate's command that ran (or of the last one tried)
    records: dict[str, BaselineRecord] = field(default_factory=dict)
    #: each gate's command, the plugin that chose it (None: the user, asked)
    #: and where it was read (None: not from a file): the first candidate that
    #: ran, or the user's choice
    commands: dict[str, tuple[str, str | None, str | None]] = field(default_factory=dict)
    #: the gates whose command the user kept though it could not run here
    kept: set[str] = field(default_factory=set)
    #: each gate's candidates that could not run, ``(command, why)``, in the order tried
    passed_over: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: why nothing (or not every gate) was proven (None: every command was measured)
    problem: str | None = None


def prove_on_head(
    pm: pluggy.PluginManager,
    project_dir: Path,
    config: Config,
    on_gate: Callable[[GateResult], None] = lambda result: None,
    choose: Choose | None = None,
) -> Proof:
    """Run each gate's chosen command once on HEAD, in a scratch copy; a
    command that cannot run there gives its place to the next candidate.

    :param on_gate: told each gate's result as soon as it ran (a progress line).
    :param choose: asked about a gate none of whose candidates ran (None: never asked).
    """
    from stepkit.workspace.baseline import ref_tree
    from stepkit.workspace.gate_commands import candidates, gate_source

    try:
        tree = ref_tree(project_dir, "HEAD")
    except UsageError:
        return Proof(problem="not a git repository with a commit: there is no HEAD to run them on")
    proof = Proof()
    left = {
        gate: found for gate in _gates() if (found := candidates(pm, gate, project_dir, config))
    }
    trying: dict[str, tuple[str, str | None]] = {gate: found.pop(0) for gate, found in left.items()}
    while trying:
        records, problem = _measure(pm, project_dir, config, tree, trying, on_gate)
        proof.problem = proof.problem or problem
        retry: dict[str, tuple[str, str | None]] = {}
        for gate, (command, plugin) in trying.items():
            record = records.get(gate)
            why = record.could_not_run if record is not None else None
            if why is None:
                if record is not None:
                    proof.records[gate] = record
                source = gate_source(pm, gate, command, project_dir) if plugin else None
                proof.commands[gate] = (command, plugin, source)
                continue
            proof.passed_over.setdefault(gate, []).append((command, why))
            if left.get(gate):
                retry[gate] = left[gate].pop(0)
                continue
            chosen = choose(gate, proof.passed_over[gate]) if choose is not None else None
            if chosen is None:
                continue
            if chosen[1]:  # kept as it is, though it could not run here
                proof.commands[gate] = (chosen[0], None, None)
                proof.kept.add(gate)
                continue
            retry[gate] = (chosen[0], None)
        trying = retry
    return proof


def _gates() -> tuple[str, ...]:
    from stepkit.gatetable import GATE_ORDER

    return GATE_ORDER


def _measure(
    pm: pluggy.PluginManager,
    project_dir: Path,
    config: Config,
    tree: object,
    trying: dict[str, tuple[str, str | None]],
    on_gate: Callable[[GateResult], None],
) -> tuple[dict[str, BaselineRecord], str | None]:
    """One start measure of the commands in ``trying``, by gate: their records
    (under the command as chosen), and the measure's problem."""
    from stepkit.workspace import sandbox
    from stepkit.workspace.gate_commands import PlannedCommand, plan_gates
    from stepkit.workspace.gates import GateRunner
    from stepkit.workspace.start_outcomes import StartMeasure
    from stepkit.workspace.store import store_root

    runs = {gate: _on_files(command, project_dir) for gate, (command, _) in trying.items()}
    planned = {
        gate: PlannedCommand(command=runs[gate], plugin=plugin)
        for gate, (_, plugin) in trying.items()
    }
    told: set[str] = set()

    def tell(result: GateResult) -> None:
        told.add(result.name)
        on_gate(result)

    def measure(where: Path, log_dir: Path, names: list[str]) -> list[GateResult]:
        there = plan_gates(pm, where, config)
        there = there.model_copy(update={"commands": {**there.commands, **planned}})
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

    job = StartMeasure(project_dir, tree, runs, measure, policy)  # type: ignore[arg-type]
    job.run()
    for gate, record in job.records.items():
        if gate not in told:  # measured before, on the same files: said as well
            summary = f"{record.summary} (measured earlier on the same files)"
            shown = {"name": gate, "status": record.status, "summary": summary.strip()}
            on_gate(GateResult.model_validate(shown))
    return job.records, job.problem


def _on_files(command: str, project_dir: Path) -> str:
    """``command`` with its ``{files}`` filled with files of HEAD (itself without any)."""
    from stepkit.workspace.gate_commands import expand_files, has_files_placeholder
    from stepkit.workspace.scope import git

    if not has_files_placeholder(command):
        return command
    listed = git.tracked_named(project_dir, ("*",)) or []
    chosen = _first(command, [rel for rel in listed if not rel.startswith(".")])
    return (expand_files(command, chosen)[0] or command) if chosen else command


def _first(command: str, files: list[str]) -> list[str]:
    """The first :data:`PROOF_FILES` of ``files`` that ``command``'s placeholder takes."""
    from stepkit.workspace.gate_commands import FILES_PLACEHOLDER

    found = FILES_PLACEHOLDER.search(command)
    extensions = tuple(
        e.strip() for e in ((found.group(1) if found else "") or "").split(",") if e.strip()
    )
    return [f for f in files if not extensions or f.endswith(extensions)][:PROOF_FILES]
