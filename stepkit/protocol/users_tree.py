"""A ``--worktree`` run watches the user's own tree while the coder's code runs.

The nodes that run what the coder wrote (the coder round, every gate node)
are wrapped by :func:`watched`: the user's tree is looked at
(:mod:`stepkit.workspace.scope.users_tree`) before and after the node, and
a change is a tamper flag naming the paths and who ran.  stepkit cannot
tell the coder's writes from the user's own (they keep working there while
the step runs), so the flag says both; it forces the independent review and
is shown at the final approval and in the handoff, where the user decides.
The flag is a ``round_flags`` item, so later coder rounds keep it.

The look taken before the node is also kept, sealed, in the run directory,
with the flags the node raised once it has compared.  A node cut off by a
signal (a coder can signal stepkit) never hands its flags to the run: the
next watched node, when the run goes on, finds them missing and compares
the kept look with the tree then.  A run outside a stepkit work tree
watches nothing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stepkit.records import Outcome, StageContext, StageFault
from stepkit.workspace.scope import users_tree
from stepkit.workspace.worktree_record import SETTING, WorktreeRecord

#: the sealed look kept in the run directory while a watched node runs
RECORD = "users_tree.json"

Node = Callable[[StageContext], Outcome]


def watched(who: str) -> Callable[[Node], Node]:
    """Wrap a node that runs the coder's code; ``who`` names it in the flag
    (``the coder``, ``the tests gate``)."""

    def wrap(node: Node) -> Node:
        @functools.wraps(node)
        def watching(ctx: StageContext) -> Outcome:
            top = users_top(ctx)
            if top is None:
                return node(ctx)
            flags = _cut_off_flags(ctx, top)
            before = users_tree.look(top)
            _keep(ctx, who, before)
            try:
                outcome = node(ctx)
            except StageFault as fault:
                new = _flags(who, before, top)
                _keep(ctx, who, before, new)
                fault.updates = with_flags(ctx.state, fault.updates, [*flags, *new])
                raise
            new = _flags(who, before, top)
            _keep(ctx, who, before, new)
            return Outcome(route=outcome.route, updates=with_flags(ctx.state, outcome.updates, [*flags, *new]))

        return watching

    return wrap


def users_top(ctx: StageContext) -> Path | None:
    """The root of the user's work tree when the run is in a stepkit work tree."""
    record = WorktreeRecord.from_mapping(ctx.settings.get(SETTING))
    return Path(record.origin_top) if record is not None else None


def with_flags(state: dict[str, Any], updates: dict[str, Any], flags: list[str]) -> dict[str, Any]:
    """``updates`` with ``flags`` added to the round's flags and the tamper flags."""
    if not flags:
        return updates
    tamper = updates.get("tamper_flags", state.get("tamper_flags", []))
    return {**updates, "round_flags": [*updates.get("round_flags", []), *flags],
            "tamper_flags": [*tamper, *flags]}


def _flags(who: str, before: users_tree.Look, top: Path, cut_off: bool = False) -> list[str]:
    changed = users_tree.changes(before, users_tree.look(top))
    if not changed:
        return []
    when = f"while {who} ran" + (" (stepkit was stopped then)" if cut_off else "")
    return [(f"your own work tree changed {when}: {users_tree.shown(changed)}. stepkit writes nothing in {top} "
             f"during a run: unless you made these changes yourself, {who} reached outside the step's work tree")]


def _keep(ctx: StageContext, who: str, before: users_tree.Look, flags: list[str] | None = None) -> None:
    """Keep the look taken before ``who`` ran and, once it has compared, the flags it raised."""
    from stepkit.workspace.seal import write_sealed

    if ctx.run_dir is not None:
        record: dict[str, Any] = {"who": who, "look": before.as_dict()}
        if flags is not None:
            record["flags"] = flags
        write_sealed(Path(ctx.run_dir) / RECORD, json.dumps(record))


def _cut_off_flags(ctx: StageContext, top: Path) -> list[str]:
    """The flags of the last watched node when the run never took them: it
    was cut off before it compared, or after, with its updates (the flags)
    dropped, as a node cut off is.  Then the look it kept is compared with
    now.  A record that is not stepkit's is a flag too."""
    from stepkit.workspace.seal import SealBroken, read_sealed

    if ctx.run_dir is None:
        return []
    path = Path(ctx.run_dir) / RECORD
    try:
        data = json.loads(read_sealed(path))
        who, before, raised = str(data["who"]), users_tree.Look.from_dict(data["look"]), data.get("flags")
    except FileNotFoundError:
        return []
    except (SealBroken, ValueError, KeyError, TypeError) as exc:
        return [(f"the record of your own work tree kept in the run directory was forged or edited ({exc}): "
                 f"what changed in {top} while a gate or the coder ran before stepkit was stopped is unknown")]
    if raised is not None and set(raised) <= set(ctx.state.get("round_flags", [])):
        return []  # the node ended and its flags (maybe none) are the run's
    return _flags(who, before, top, cut_off=True)

