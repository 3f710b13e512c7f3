"""What the coder's code may touch that the scope guard does not see, watched
around every node that runs it.

The nodes that run what the coder wrote (the coder round, every gate node:
a build script, a test) are wrapped by :func:`watched`, which looks before
and after the node at:

- the files git ignores in the project (:mod:`stepkit.workspace.scope.hidden`):
  one added or changed there, outside caches and build output, was hidden
  from the step's changes, yet the gates see it;
- the site directories of the Pythons a gate starts
  (:mod:`stepkit.workspace.scope.startup`), outside the project: their
  ``.pth`` files and ``sitecustomize`` run before every test;
- the Python bytecode beside the project's sources
  (:mod:`stepkit.workspace.scope.bytecode`): what the node added or changed
  there is removed after it (a cache: Python compiles the source again),
  so bytecode forged for other source than the tree holds never runs;
- in a ``--worktree`` run, the user's own tree
  (:mod:`stepkit.workspace.scope.users_tree`): stepkit writes nothing
  there, but the coder runs as the user and can find it through git.
  stepkit cannot tell the coder's writes from the user's own (they keep
  working while the step runs), so the flag says both; stepkit's own
  merges (a sibling ``--parallel`` run's ``--merge``) are recorded and
  not flagged.

Each of the others is a tamper flag naming the paths and who ran: it forces the
independent review and is shown at the final approval and in the handoff,
where the user decides.  They are events of the run, not judgments of
the tree (:attr:`~stepkit.records.TamperFlag.of_the_tree`), so later coder
rounds keep them.

The looks taken before the node are also kept, sealed, in the run
directory, with the flags the node raised once it has compared.  A node cut
off by a signal (a coder can signal stepkit) never hands its flags to the
run: the next watched node, when the run goes on, finds them missing and
compares the kept looks with the trees then.  A forged record is a flag.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepkit.protocol.state import kept_flag, step_state
from stepkit.records import Outcome, StageContext, StageFault, TamperFlag, dumped
from stepkit.text import first_of
from stepkit.workspace import sandbox
from stepkit.workspace.scope import bytecode, hidden, startup, users_tree
from stepkit.workspace.worktree_record import SETTING, WorktreeRecord

#: the sealed looks kept in the run directory from the start of a watched node
RECORD = "watched.json"
#: paths named in one flag at most
MAX_NAMED = 10

Node = Callable[[StageContext], Outcome]


@dataclass(frozen=True)
class Looks:
    """What a watched node is compared with."""

    hidden: hidden.Look | None
    startup: startup.Look
    bytecode: bytecode.Look
    users: users_tree.Look | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "hidden": None if self.hidden is None else _listed(self.hidden),
            "startup": _listed(self.startup),
            "bytecode": _listed(self.bytecode),
            "users": None if self.users is None else self.users.as_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Looks:
        """:raises KeyError, TypeError, ValueError, AttributeError: not :meth:`as_dict`'s form."""
        found, users = data["hidden"], data["users"]
        return cls(
            hidden=None if found is None else _signatures(found),
            startup=_signatures(data["startup"]),
            bytecode=_signatures(data["bytecode"]),
            users=None if users is None else users_tree.Look.from_dict(users),
        )


def _listed(signatures: dict[str, tuple[int, ...]]) -> dict[str, list[int]]:
    return {path: list(signature) for path, signature in signatures.items()}


def _signatures(listed: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    return {str(path): tuple(int(n) for n in signature) for path, signature in listed.items()}


def watched(
    who: str, every_hidden: bool = False, idle: Callable[[StageContext], bool] | None = None
) -> Callable[[Node], Node]:
    """Wrap a node that runs the coder's code; ``who`` names it in the flags
    (``the coder``, ``the tests gate``).  A gate writes ignored files as a
    matter of course (build output): only those on the verification surface
    are flagged, unless ``every_hidden`` (the coder round, which has no
    business hiding anything).  When ``idle`` says the node runs nothing
    this time (a gate with no command), it runs unwatched: nothing it runs
    can change what is looked at (the next watched node takes the flags of
    one cut off before it, as it would after this one)."""

    def wrap(node: Node) -> Node:
        @functools.wraps(node)
        def watching(ctx: StageContext) -> Outcome:
            if idle is not None and idle(ctx):
                return node(ctx)
            top = users_top(ctx)
            flags = _cut_off_flags(ctx, top)
            before = _look(ctx, top)
            _keep(ctx, who, before, every_hidden=every_hidden)
            policy = node_policy(ctx)
            if policy is None:
                flags += unconfined_flags(ctx)
            try:
                with sandbox.confined(policy), bytecode.trusted(ctx.project_dir, before.bytecode):
                    outcome = node(ctx)
            except StageFault as fault:
                fault.updates = with_flags(
                    ctx, fault.updates, [*flags, *_after(ctx, who, before, top, every_hidden)]
                )
                raise
            flags += _after(ctx, who, before, top, every_hidden)
            return Outcome(route=outcome.route, updates=with_flags(ctx, outcome.updates, flags))

        return watching

    return wrap


def node_policy(ctx: StageContext) -> sandbox.Policy | None:
    """The sandbox of the node's commands (:mod:`stepkit.workspace.sandbox`):
    the project's ``[sandbox]`` settings; None where this machine cannot confine."""
    from stepkit.workspace.store import store_root

    settings = ctx.config.sandbox
    return sandbox.policy_for(
        Path(ctx.project_dir),
        store_root(Path(ctx.project_dir)),
        writable=settings.writable,
        # the step's tree stays readable where it is not the tree a command runs
        # in (a baseline's copy links to its dependency directories)
        readable=[*settings.readable, str(ctx.project_dir)],
        network=settings.network,
    )


def unconfined_flags(ctx: StageContext) -> list[TamperFlag]:
    """The flag that the coder's code ran with no sandbox, once a run."""
    text = sandbox.UNCONFINED_FLAG.format(why=sandbox.unavailable() or "no sandbox")
    flag = TamperFlag.of_stepkit("unconfined", text)
    return [] if flag in step_state(ctx).tamper_flags else [flag]


def _after(
    ctx: StageContext, who: str, before: Looks, top: Path | None, every_hidden: bool
) -> list[TamperFlag]:
    """Once ``who`` ran: its flags, kept with the looks."""
    flags = _compared(ctx, who, before, top, every_hidden)
    _keep(ctx, who, before, flags, every_hidden)
    return flags


def _compared(
    ctx: StageContext,
    who: str,
    before: Looks,
    top: Path | None,
    every_hidden: bool,
    cut_off: bool = False,
) -> list[TamperFlag]:
    """The trees now against ``before``: the bytecode written since removed, the flags."""
    now = _look(ctx, top)
    bytecode.drop_changed(before.bytecode, now.bytecode)
    return _flags(ctx, who, before, now, top, every_hidden, cut_off)


def unseen_flags(ctx: StageContext) -> list[TamperFlag]:
    """The flags of a watched node cut off that no later node took (the run
    ends without one: a coder round cut off is never run again)."""
    return _cut_off_flags(ctx, users_top(ctx))


def users_top(ctx: StageContext) -> Path | None:
    """The root of the user's work tree when the run is in a stepkit work tree."""
    record = WorktreeRecord.from_mapping(ctx.settings.get(SETTING))
    return Path(record.origin_top) if record is not None else None


def with_flags(
    ctx: StageContext, updates: dict[str, Any], flags: list[TamperFlag]
) -> dict[str, Any]:
    """``updates`` with ``flags`` added to the tamper flags (those ``updates``
    holds already, or the state's)."""
    if not flags:
        return updates
    tamper = updates.get("tamper_flags", dumped(step_state(ctx).tamper_flags))
    return {**updates, "tamper_flags": [*tamper, *dumped(flags)]}


def _look(ctx: StageContext, top: Path | None) -> Looks:
    from stepkit.workspace.gates import Meanwhile
    from stepkit.workspace.toolpath import tool_dirs

    # the ignored files' listing (a git process) is taken in a thread of its
    # own while this one takes the others (the bytecode's, another git process)
    ignored = Meanwhile(lambda: hidden.look(ctx.project_dir))
    ignored.start()
    tools = [str(Path(ctx.project_dir, rel)) for rel in tool_dirs(ctx.pm, ctx.project_dir)]
    return Looks(
        startup=startup.look(tools),
        bytecode=bytecode.look(ctx.project_dir),
        users=users_tree.settled_look(top) if top is not None else None,
        hidden=ignored.value(),
    )


def _flags(
    ctx: StageContext,
    who: str,
    before: Looks,
    now: Looks,
    top: Path | None,
    every_hidden: bool,
    cut_off: bool = False,
) -> list[TamperFlag]:
    when = f"while {who} ran" + (" (stepkit was stopped then)" if cut_off else "")
    flags = []
    concealed = hidden.changes(
        before.hidden, now.hidden, None if every_hidden else _on_surface(ctx)
    )
    if concealed:
        text = (
            f"files git ignores were added or changed {when}: {_named(concealed)}. "
            "They are not among the step's changes, yet the gates see them"
        )
        flags.append(TamperFlag.by(who, "hidden_files", text))
    started = startup.changes(before.startup, now.startup)
    if started:
        text = (
            f"the site directories of the gates' Pythons changed {when}: {_named(started)}. "
            "Every Python a gate starts runs their .pth files and imports from them"
        )
        flags.append(TamperFlag.by(who, "site_dirs", text))
    changed = users_tree.changes(before.users, now.users) if before.users and now.users else []
    if (
        changed
        and top is not None
        and before.users
        and now.users
        and users_tree.own_change(top, before.users, now.users)
    ):
        changed = []  # stepkit's own merge of a sibling run's branch
    if changed:
        text = (
            f"your own work tree changed {when}: {_named(changed)}. stepkit writes nothing "
            f"in {top} during a run: unless you made these changes yourself, {who} reached outside "
            "the step's work tree"
        )
        flags.append(TamperFlag.by(who, "users_tree", text))
    return flags


def _named(paths: list[str]) -> str:
    return first_of(paths, MAX_NAMED)


def _on_surface(ctx: StageContext) -> Callable[[str], bool]:
    """Whether a path is on the verification surface (:mod:`stepkit.workspace.surface`)."""
    from stepkit.workspace.gate_commands import run_scripts
    from stepkit.workspace.surface import rule_for, surface_rules

    rules = functools.cache(  # asked only for a change
        lambda: surface_rules(
            ctx.pm, ctx.project_dir, ctx.config, run_scripts(ctx.settings, ctx.pm, ctx.project_dir)
        )
    )
    return lambda rel: rule_for(rules(), rel.rstrip("/")) is not None


def _keep(
    ctx: StageContext,
    who: str,
    before: Looks,
    flags: list[TamperFlag] | None = None,
    every_hidden: bool = False,
) -> None:
    """Keep the looks taken before ``who`` ran and, once it has compared, the flags it raised."""
    from stepkit.workspace.seal import write_sealed

    if ctx.run_dir is not None:
        record: dict[str, Any] = {
            "who": who,
            "every_hidden": every_hidden,
            "looks": before.as_dict(),
        }
        if flags is not None:
            record["flags"] = dumped(flags)
        # the looks are on the disk before the node runs; the flags need not be: a
        # record that lost them to a power loss has the looks compared again
        write_sealed(Path(ctx.run_dir) / RECORD, json.dumps(record), durable=flags is None)


def _cut_off_flags(ctx: StageContext, top: Path | None) -> list[TamperFlag]:
    """The flags of the last watched node when the run never took them: it
    was cut off before it compared, or after, with its updates (the flags)
    dropped, as a node cut off is.  Then the looks it kept are compared with
    now.  A record that is not stepkit's is a flag too."""
    from stepkit.workspace.seal import SealBroken, read_sealed

    if ctx.run_dir is None:
        return []
    try:
        data = json.loads(read_sealed(Path(ctx.run_dir) / RECORD))
        who, before, raised = str(data["who"]), Looks.from_dict(data["looks"]), data.get("flags")
        raised = None if raised is None else [kept_flag(flag) for flag in raised]
        every_hidden = bool(data.get("every_hidden"))
    except FileNotFoundError:
        return []
    except (SealBroken, ValueError, KeyError, TypeError, AttributeError) as exc:
        text = (
            f"the record stepkit keeps of the trees a gate or the coder may touch was forged or edited "
            f"({exc}): what changed while one ran before stepkit was stopped is unknown"
        )
        return [TamperFlag.of_stepkit("run_store", text)]
    if raised is not None and all(flag in step_state(ctx).tamper_flags for flag in raised):
        return []  # the node ended and its flags (maybe none) are the run's
    return _compared(ctx, who, before, top, every_hidden, cut_off=True)
