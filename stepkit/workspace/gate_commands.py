"""Resolve each gate's command through the project hooks, and the project types.

The one place that maps a gate to its hook, turns a plugin's ``""`` ("no
command for this gate") into None, and records which plugin chose.  Used by
``stepkit detect``, the gate runner and :mod:`stepkit.testing`.

Commands are fixed once: :func:`plan_gates` resolves them all before the
first gate of a verify or a run (a gate that leaves a lockfile behind must
not change the next gate's command), and a run keeps its
:class:`GatePlan` in its settings, stored in its checkpoint, so a resume
runs the same commands (:func:`run_gate_plan`).

A format command may name the files it formats with ``{files}`` or
``{files:.ext1,.ext2}``: :func:`expand_files` puts there the step's changed
files (those extensions only, when given), so a formatter touches nothing
else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
from pydantic import Field, ValidationError

from stepkit import gatetable, quoting
from stepkit.config import Config
from stepkit.errors import PluginError
from stepkit.gatetable import GATE_ORDER
from stepkit.lazyregex import lazy_compile
from stepkit.models import Model
from stepkit.pluginmanager import first_answer
from stepkit.workspace.seal import Apart

if TYPE_CHECKING:
    from concurrent.futures import Future

#: The hook every gate's command is asked through.
GATE_HOOK = "stepkit_gate_command"


def resolve_command(
    pm: pluggy.PluginManager, gate: str, project_dir: Path, config: Config
) -> tuple[str | None, str | None]:
    """Ask the plugins for ``gate``'s command without running it:
    ``stepkit_gate_command``, with the gate's deprecated hook
    (``stepkit_test_command`` …) asked in the same call.

    :param gate: a gate of the gate table (:data:`stepkit.gatetable.GATES`).
    :return: ``(command, plugin)``.  ``command`` is None when the gate has no
        command; ``plugin`` names the plugin that answered — also when it
        answered ``""`` (it decided there is none) — and is None when no
        plugin had an opinion.
    :raises ValueError: ``gate`` is not a gate of the table.
    :raises PluginError: the answering plugin returned something other than a string.
    """
    row = gatetable.gate(gate)
    command, plugin = first_answer(
        pm,
        GATE_HOOK,
        also=[row.legacy_hook] if row.legacy_hook else [],
        gate=gate,
        project_dir=project_dir,
        config=config,
    )
    if command is not None and not isinstance(command, str):
        kind = type(command).__name__
        raise PluginError(
            f"plugin {plugin!r}: {GATE_HOOK} for the {gate} gate returned {kind}, not a string"
        )
    command = command.strip() if command else None
    return command or None, plugin


#: The plugin that answers with the user's own setting: it has no other candidate.
USERS_PLUGIN = "stepkit.plugins.overrides"


def candidates(
    pm: pluggy.PluginManager, gate: str, project_dir: Path, config: Config
) -> list[tuple[str, str]]:
    """Every command the plugins offer for ``gate``, best first, each
    ``(command, plugin)``: the first is :func:`resolve_command`'s answer,
    the others those the plugins it passed over would have given, asked in
    the same order.  The list ends where the search would end: at the
    user's own setting (``[commands]``, ``TEST_CMD`` …: the user chose), and
    at a plugin that answers ``""`` (it decided the gate has none)."""
    found: list[tuple[str, str]] = []
    asked: list[str] = []
    while True:
        command, plugin = first_answer(
            pm,
            GATE_HOOK,
            without=asked,
            also=[row.legacy_hook] if (row := gatetable.gate(gate)).legacy_hook else [],
            gate=gate,
            project_dir=project_dir,
            config=config,
        )
        if plugin is None or not isinstance(command, str) or not command.strip():
            return found
        if all(command.strip() != seen for seen, _ in found):
            found.append((command.strip(), plugin))
        if plugin == USERS_PLUGIN:
            return found
        asked.append(plugin)


def resolve_commands(
    pm: pluggy.PluginManager, project_dir: Path, config: Config
) -> dict[str, tuple[str | None, str | None]]:
    """Every gate's ``(command, plugin)`` (see :func:`resolve_command`), in gate order."""
    return {gate: resolve_command(pm, gate, project_dir, config) for gate in GATE_ORDER}


class PlannedCommand(Model):
    """One gate's command (None: the gate has none) and the plugin that chose
    it; ``not_run`` says why a gate that has a command will not run it, and
    ``fault`` why it cannot run on this machine (``stepkit_gate_fault``):
    the gate is an environment fault."""

    command: str | None = None
    plugin: str | None = None
    not_run: str = ""
    fault: str = ""


class GatePlan(Model):
    """What the gates of one verify or run execute, fixed before the first
    gate: each gate's command, and the lockfiles git tracks, which no gate
    may change."""

    commands: dict[str, PlannedCommand]
    lockfiles: list[str] = Field(default_factory=list)
    #: the project's tool directories, first on the gates' PATH (``stepkit_tool_dirs``)
    tool_dirs: list[str] = Field(default_factory=list)
    #: tools in them the step changed (:func:`~stepkit.workspace.toolpath.tool_changes`):
    #: they fail the tests gate
    tool_changes: list[str] = Field(default_factory=list)
    #: the gates in the order the project's CI runs them when it builds before
    #: it formats or lints (``stepkit_gate_order``); ``[]``: CI shows no such need
    ci_order: list[str] = Field(default_factory=list)
    #: the gates whose command the step's own changes would have changed, one
    #: tamper flag each (:func:`run_gate_plan`): they run the command chosen
    #: before the step
    command_changes: list[str] = Field(default_factory=list)

    def run_order(self) -> tuple[str, ...]:
        """The order the gates run in: :attr:`ci_order` when it names each
        gate once, else the gate table's."""
        if sorted(self.ci_order) == sorted(GATE_ORDER):
            return tuple(self.ci_order)
        return GATE_ORDER

    def first_gates(self) -> tuple[str, ...]:
        """The format and lint gates, in run order, with the build when it
        runs before either: the gates a run checks before its build node."""
        order = [gate for gate in self.run_order() if gate != "tests"]
        return tuple(order[: max(order.index("format"), order.index("lint")) + 1])

    def needs_build(self, gate: str) -> bool:
        """``gate`` is a format or lint step that CI runs after the build (it
        may read the build's output): when the build fails it is not run."""
        order = self.run_order()
        return gate in ("format", "lint") and order.index(gate) > order.index("build")

    def command(self, gate: str) -> tuple[str | None, str | None]:
        """``(command, plugin)`` of ``gate``, as :func:`resolve_command` answers."""
        planned = self.commands.get(gate) or PlannedCommand()
        return planned.command, planned.plugin


def check_mode(
    plan: GatePlan, pm: pluggy.PluginManager, project_dir: Path, config: Config
) -> GatePlan:
    """``plan`` with the format command in its check mode
    (``stepkit_format_check_command``), which rewrites nothing: ``stepkit
    verify`` without ``--fix``.  A task-runner call whose body
    (``stepkit_command_body``) only checks is its own check mode: verify runs
    the same command a run does.  A formatter with no check mode is not run."""
    command, plugin = plan.command("format")
    if command is None:
        return plan
    check = _check_command(pm, command, project_dir, config)
    if not check:
        body = pm.hook.stepkit_command_body(command=command, project_dir=project_dir) or ""
        lines = [line.strip().lstrip("@-+").strip() for line in body.splitlines()]
        lines = [line for line in lines if line]
        if lines and all(_check_command(pm, line, project_dir, config) == line for line in lines):
            check = command
    planned = (
        PlannedCommand(command=check, plugin=plugin)
        if check
        else PlannedCommand(
            plugin=plugin,
            not_run=f"not run: no check mode is known for `{command}` "
            "(stepkit verify --fix runs it, rewriting files)",
        )
    )
    return plan.model_copy(update={"commands": {**plan.commands, "format": planned}})


def _check_command(
    pm: pluggy.PluginManager, command: str, project_dir: Path, config: Config
) -> str | None:
    check, _ = first_answer(
        pm, "stepkit_format_check_command", command=command, project_dir=project_dir, config=config
    )
    return check


#: The run setting that holds a run's :class:`GatePlan` (stored with the checkpoint).
RUN_PLAN_KEY = "gate_plan"
#: The run setting that holds each gate's command as chosen before the coder
#: ran (:func:`start_commands`).
START_COMMANDS_KEY = "start_commands"
#: The run setting that holds the scripts those commands ran then.
START_SCRIPTS_KEY = "start_scripts"
#: The run setting that holds the fingerprint of the project's tool
#: directories taken when the run started (:func:`start_fingerprint`).
TOOLS_KEY = "tool_fingerprint"
#: The run setting that holds the fingerprint of the installed files of the
#: gates' tools and of stepkit taken then (:mod:`stepkit.workspace.installed`):
#: thousands of hashes, kept apart from the checkpoint (an
#: :class:`~stepkit.workspace.seal.Apart`, written once); a run started
#: before that holds it inline.
INSTALLED_KEY = "installed_fingerprint"


def start_fingerprint(
    settings: MutableMapping[str, object], pm: pluggy.PluginManager, project_dir: Path
) -> None:
    """Fingerprint the tools that judge the step before the coder runs, into
    the run's settings: the project's tool directories now, and the
    installed files of the distributions the gate commands chosen then use
    (:func:`start_commands` first) and of stepkit itself beside the start
    of the run (hashing them and waiting for the gates' Pythons to name
    their site directories took 0.1-0.2 s before the first node): its key
    holds None until :func:`settle_fingerprint` puts it there, which the
    run does before any node that is not read-only (the coder's, a gate's),
    and the start's measure waits for it before its first command
    (:func:`fingerprint_taken`)."""
    from stepkit.workspace import ahead
    from stepkit.workspace.toolpath import fingerprint, tool_dirs

    dirs = tool_dirs(pm, project_dir)
    settings[TOOLS_KEY] = fingerprint(project_dir, dirs)
    commands = settings.get(START_COMMANDS_KEY)
    # the key is there from now on: a save that reads the settings meanwhile never sees them grow
    settings[INSTALLED_KEY] = None
    _TAKING[id(settings)] = (
        settings,
        ahead.beside(
            lambda: _installed_for(project_dir, dirs, commands), "stepkit-installed-fingerprint"
        ),
    )


#: the installed fingerprints being taken beside the start of a run, by the id of its settings
_TAKING: dict[int, tuple[MutableMapping[str, object], Future[dict[str, str]]]] = {}


def _taking(settings: Mapping[str, object]) -> Future[dict[str, str]] | None:
    held = _TAKING.get(id(settings))
    return held[1] if held is not None and held[0] is settings else None


def settle_fingerprint(
    settings: MutableMapping[str, object], pm: pluggy.PluginManager, project_dir: Path
) -> None:
    """The installed fingerprint in the run's ``settings`` (a run whose
    settings hold its key): the one taken beside the start, waited for; for
    a run resumed before it was kept (its process stopped at an approval or
    by a signal before the coder's first round), taken now, still before
    anything that could change the tools ran."""
    if INSTALLED_KEY not in settings or settings[INSTALLED_KEY] is not None:
        return
    taking = _taking(settings)
    if taking is not None:
        found = taking.result()
    else:
        from stepkit.workspace.toolpath import tool_dirs

        found = _installed(project_dir, tool_dirs(pm, project_dir), settings)
    settings[INSTALLED_KEY] = Apart(found)
    _TAKING.pop(id(settings), None)


def forget_fingerprint(settings: Mapping[str, object]) -> None:
    """The run of ``settings`` ended: what was being taken for it is not kept."""
    _TAKING.pop(id(settings), None)


def fingerprint_taken(settings: Mapping[str, object]) -> None:
    """Wait until the installed fingerprint taken beside the start of the
    run of ``settings`` is done, if one is being taken (what it raised is
    :func:`settle_fingerprint`'s to say)."""
    from concurrent.futures import wait

    taking = _taking(settings)
    if taking is not None:
        wait([taking])


def fingerprint_ahead(pm: pluggy.PluginManager | None, project_dir: Path) -> None:
    """Start what :func:`start_fingerprint` waits for, while the run's set-up
    goes on: the gates' Pythons asked for their site directories (each
    starts a process).  Without ``pm``: the Pythons on PATH only."""
    from stepkit.workspace.scope import startup
    from stepkit.workspace.toolpath import tool_dirs

    dirs = tool_dirs(pm, project_dir) if pm is not None else []
    startup.ask_ahead(_absolute(project_dir, dirs))


def _absolute(project_dir: Path, dirs: list[str]) -> tuple[str, ...]:
    return tuple(str(Path(project_dir, rel)) for rel in dirs)


def _installed(
    project_dir: Path, dirs: list[str], settings: Mapping[str, object]
) -> dict[str, str]:
    return _installed_for(project_dir, dirs, settings.get(START_COMMANDS_KEY))


def _installed_for(project_dir: Path, dirs: list[str], chosen: object) -> dict[str, str]:
    """The installed fingerprint for the gate commands ``chosen`` before the
    step (:data:`START_COMMANDS_KEY`'s value)."""
    from stepkit.workspace import installed
    from stepkit.workspace.scope import startup

    sites = startup.site_dirs(_absolute(project_dir, dirs))
    return installed.fingerprint(sites, _commands_in(chosen, table_key=None))


def start_commands(
    settings: MutableMapping[str, object],
    pm: pluggy.PluginManager,
    project_dir: Path,
    config: Config,
) -> None:
    """Choose every gate's command before the coder runs, into the run's
    settings: the step is judged by commands read from the tree it started
    from, not from files it can rewrite (a CI workflow, a task runner's file),
    and the scripts they run are found in that tree too (a step that points
    ``make test`` at another script still has the old one judged)."""
    from stepkit.workspace.surface import gate_scripts

    table = {
        gate: _startable(pm, gate, command, plugin, project_dir, config)
        for gate, (command, plugin) in resolve_commands(pm, project_dir, config).items()
    }
    settings[START_COMMANDS_KEY] = table
    settings[START_SCRIPTS_KEY] = gate_scripts(
        pm, project_dir, [entry["command"] for entry in table.values() if entry["command"]]
    )


def cannot_start(
    pm: pluggy.PluginManager, gate: str, command: str, project_dir: Path, dirs: list[str]
) -> str:
    """Why ``command`` cannot start here, seen without running it: a
    plugin's ``stepkit_gate_fault``, or a program that is not on the gates'
    PATH (``dirs`` first) nor a file of the project; "" when it can."""
    from stepkit.workspace.programs import missing_program

    return gate_fault(pm, gate, command, project_dir) or missing_program(command, project_dir, dirs)


def _startable(
    pm: pluggy.PluginManager,
    gate: str,
    command: str | None,
    plugin: str | None,
    project_dir: Path,
    config: Config,
) -> dict[str, Any]:
    """The start's entry of ``gate``: ``command``, or, when detection chose
    it and it cannot start here (:func:`cannot_start`),
    the gate's next candidate that can, naming the command it ``replaces``
    and why.  The user's own command is never replaced."""
    from stepkit.workspace.toolpath import tool_dirs

    entry: dict[str, Any] = {
        "command": command,
        "plugin": plugin,
        "source": gate_source(pm, gate, command, project_dir),
    }
    if command is None or plugin == USERS_PLUGIN:
        return entry
    dirs = tool_dirs(pm, project_dir)
    why = cannot_start(pm, gate, command, project_dir, dirs)
    if not why:
        return entry
    for other, by in candidates(pm, gate, project_dir, config)[1:]:
        if not cannot_start(pm, gate, other, project_dir, dirs):
            source = gate_source(pm, gate, other, project_dir)
            return {
                "command": other,
                "plugin": by,
                "source": source,
                "replaces": command,
                "replaces_source": entry["source"],
                "why": why,
            }
    return entry


def start_replacements(settings: Mapping[str, object]) -> list[dict[str, Any]]:
    """The gates whose detected command could not start and gave its place
    to the next candidate (:func:`start_commands`), in gate order: each
    ``gate``, ``command``, ``replaces``, ``why`` and ``notice`` (one line
    for the user)."""
    table = settings.get(START_COMMANDS_KEY)
    found = []
    for gate, entry in table.items() if isinstance(table, dict) else ():
        if not (isinstance(entry, dict) and entry.get("replaces") and entry.get("command")):
            continue
        origin = f" (from {entry['replaces_source']})" if entry.get("replaces_source") else ""
        notice = (
            f"the {gate} gate runs `{entry['command']}` in the place of `{entry['replaces']}`"
            f"{origin}, which cannot start here: {entry.get('why') or 'not known'}"
        )
        found.append(
            {
                "gate": gate,
                "command": entry["command"],
                "replaces": entry["replaces"],
                "why": entry.get("why") or "",
                "notice": notice,
            }
        )
    return found


def run_scripts(
    settings: Mapping[str, object], pm: pluggy.PluginManager, project_dir: Path
) -> list[str]:
    """The scripts a run's gate commands run, for the verification surface:
    those found when the run started (:func:`start_commands`) and those the
    gate plan's commands run now."""
    from stepkit.workspace.surface import gate_scripts

    before = settings.get(START_SCRIPTS_KEY)
    return sorted(
        {
            *(before if isinstance(before, list) else ()),
            *gate_scripts(pm, project_dir, _commands_in(settings.get(RUN_PLAN_KEY))),
        }
    )


def run_search_roots(settings: Mapping[str, object], project_dir: Path) -> list[str]:
    """The project directories a run's gate commands, chosen when it started
    or planned now, put on an interpreter's search path (``PYTHONPATH=src``)."""
    from stepkit.workspace.surface import search_roots

    return search_roots(
        project_dir,
        [
            *_commands_in(settings.get(START_COMMANDS_KEY), table_key=None),
            *_commands_in(settings.get(RUN_PLAN_KEY)),
        ],
    )


def _commands_in(record: object, table_key: str | None = "commands") -> list[str]:
    """The commands of a gate plan's record (``{"commands": {gate: {"command": …}}}``),
    or of a table of them when ``table_key`` is None."""
    table = record.get(table_key) if isinstance(record, dict) and table_key else record
    return [
        planned["command"]
        for planned in (table.values() if isinstance(table, dict) else ())
        if isinstance(planned, dict) and isinstance(planned.get("command"), str)
    ]


def gate_fault(pm: pluggy.PluginManager, gate: str, command: str | None, project_dir: Path) -> str:
    """Why ``command`` cannot run on this machine (``stepkit_gate_fault``); "" when nothing is known."""
    if not command:
        return ""
    return pm.hook.stepkit_gate_fault(gate=gate, command=command, project_dir=project_dir) or ""


def gate_source(
    pm: pluggy.PluginManager, gate: str, command: str | None, project_dir: Path
) -> str | None:
    """Where ``command`` was read from in the project (``stepkit_gate_source``); None: not known."""
    return (
        pm.hook.stepkit_gate_source(gate=gate, command=command, project_dir=project_dir)
        if command
        else None
    )


def plan_gates(pm: pluggy.PluginManager, project_dir: Path, config: Config) -> GatePlan:
    """Resolve every gate's command (one :func:`resolve_commands`) and find the tracked lockfiles."""
    from stepkit.workspace.scope.lockfiles import tracked_lockfiles
    from stepkit.workspace.toolpath import tool_dirs
    from stepkit.workspace.tools import lockfile_names

    commands = {
        gate: PlannedCommand(
            command=command, plugin=plugin, fault=gate_fault(pm, gate, command, project_dir)
        )
        for gate, (command, plugin) in resolve_commands(pm, project_dir, config).items()
    }
    return GatePlan(
        commands=commands,
        lockfiles=tracked_lockfiles(project_dir, lockfile_names(pm)),
        tool_dirs=tool_dirs(pm, project_dir),
        ci_order=pm.hook.stepkit_gate_order(project_dir=project_dir) or [],
    )


def run_gate_plan(
    settings: MutableMapping[str, object],
    pm: pluggy.PluginManager,
    project_dir: Path,
    config: Config,
    *,
    tests: bool = True,
) -> GatePlan:
    """The run's gate plan: the one its settings hold (a resumed run's too),
    else one made now and put in the settings, which the run's checkpoint
    stores.  A run whose checkpoint predates gate plans gets one at its
    first gate after the resume.

    :param tests: the plan runs the tests gate, so it looks at the tools the
        step changed (:attr:`GatePlan.tool_changes`: they fail a passing tests
        gate and nothing else; the look walks every installed file of the
        gates' tools)."""
    plan = _stored_plan(settings)
    if plan is None:
        plan = gates_will_run(settings, pm, project_dir, config)
        settings[RUN_PLAN_KEY] = plan.model_dump()
    return _with_tool_changes(plan, settings, project_dir) if tests else plan


def gates_will_run(
    settings: Mapping[str, object], pm: pluggy.PluginManager, project_dir: Path, config: Config
) -> GatePlan:
    """The gate plan a run's gates run, without storing it: the one its
    settings hold, else the commands detected now with those chosen before
    the step in their place (:func:`start_commands`: a command the step
    changed, and the next candidate of one that could not start).  What the
    coder is told the gates will run."""
    plan = _stored_plan(settings)
    if plan is not None:
        return plan
    return _as_chosen_before(
        plan_gates(pm, project_dir, config), settings.get(START_COMMANDS_KEY), pm, project_dir
    )


def _stored_plan(settings: Mapping[str, object]) -> GatePlan | None:
    """The gate plan the run's settings hold (None: none, or not a valid one)."""
    stored = settings.get(RUN_PLAN_KEY)
    if stored is None:
        return None
    try:
        return GatePlan.model_validate(stored)
    except ValidationError:
        return None  # a hand-edited checkpoint: plan again


def _as_chosen_before(
    plan: GatePlan, before: object, pm: pluggy.PluginManager, project_dir: Path
) -> GatePlan:
    """``plan`` with the commands chosen before the step (``before``, from
    :func:`start_commands`) wherever the step's changes changed one, each
    change named in :attr:`GatePlan.command_changes`.  A gate that had no
    command before the step takes the one its changes give it (a step that
    sets up the project's tests), flagged too."""
    if not isinstance(before, dict):
        return plan  # a run started before commands were chosen up front
    commands, changes, replaced = dict(plan.commands), [], False
    for gate, now in plan.commands.items():
        recorded = before.get(gate)
        start: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
        was = start.get("command") if isinstance(start.get("command"), str) else None
        if was == now.command:
            continue
        if now.command is not None and now.command == start.get("replaces"):
            # the next candidate took the place of one that could not start: no change of the step's
            commands[gate] = PlannedCommand(command=was, plugin=start.get("plugin"))
            replaced = True
            continue
        where = gate_source(pm, gate, now.command, project_dir) or start.get("source")
        origin = f" (from {where})" if where else ""
        if was is None:
            changes.append(
                f"the {gate} gate had no command before the step; the step's own changes gave it "
                f"`{now.command}`{origin}, which the gates run"
            )
            continue
        commands[gate] = PlannedCommand(command=was, plugin=start.get("plugin"))
        after = f"`{now.command}`" if now.command else "none"
        changes.append(
            f"the step changed the {gate} gate's command{origin}: `{was}` before the step, {after} "
            "now; the gates run the command chosen before the step"
        )
    if not changes and not replaced:
        return plan
    return plan.model_copy(update={"commands": commands, "command_changes": changes})


def _with_tool_changes(
    plan: GatePlan, settings: Mapping[str, object], project_dir: Path
) -> GatePlan:
    """``plan`` with the tools the step changed since the run's start, in
    the project's tool directories and among the installed files of the
    gates' tools and of stepkit (every gate looks again: a later coder round
    may change them too)."""
    from stepkit.workspace import installed
    from stepkit.workspace.toolpath import fingerprint, tool_changes

    changed: list[str] = []
    before = settings.get(TOOLS_KEY)
    if isinstance(before, dict):
        now = fingerprint(project_dir, plan.tool_dirs)
        commands = [planned.command for planned in plan.commands.values()]
        changed += tool_changes(before, now, commands)
    installed_before = settings.get(INSTALLED_KEY)
    if isinstance(installed_before, dict):
        now = _installed(project_dir, plan.tool_dirs, settings)
        changed += installed.changes(installed_before, now)
    if not changed:
        return plan
    return plan.model_copy(update={"tool_changes": changed})


#: ``{files}`` or ``{files:.py,.pyi}`` in a format command.
FILES_PLACEHOLDER = lazy_compile(r"\{files(?::([^{}]*))?\}")


def expand_files(command: str, files: Iterable[str]) -> tuple[str | None, str]:
    """``command`` with each ``{files}`` placeholder replaced by the
    shell-quoted paths among ``files`` that end in one of its extensions
    (all of them without any).

    :return: ``(command to run, "")``, or ``(None, why)`` when a placeholder
        gets no file: the command must not run (given no file, most
        formatters format the whole tree).
    """
    files = sorted(files)
    empty: list[str] = []

    def paths(match: re.Match[str]) -> str:
        extensions = tuple(e.strip() for e in (match.group(1) or "").split(",") if e.strip())
        chosen = [f for f in files if not extensions or f.endswith(extensions)]
        if not chosen:
            empty.append(" or ".join(extensions) + " file" if extensions else "file")
        # a path starting with "-" would be read as an option
        return quoting.shell(f"./{f}" if f.startswith("-") else f for f in chosen)

    expanded = FILES_PLACEHOLDER.sub(paths, command)
    if empty:
        return None, f"nothing to format: no changed {empty[0]}"
    return expanded, ""


def has_files_placeholder(command: str | None) -> bool:
    """The command names its files with ``{files}``."""
    return command is not None and FILES_PLACEHOLDER.search(command) is not None


def project_types(pm: pluggy.PluginManager, project_dir: Path) -> list[str]:
    """The project types the plugins recognise, in call order (the first is the primary)."""
    types: list[str] = []
    for name in pm.hook.stepkit_detect_project(project_dir=project_dir):
        if name not in types:
            types.append(name)
    return types
