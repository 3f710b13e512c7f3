"""The checkpoint: everything a run needs to go on after a pause, a Ctrl-C
or a kill, saved as the run's ``state.json`` after every node.

Its keys are part of the run store's contract (README.md, "Run directory"): programs outside
stepkit read ``status``, ``outcome``, ``pending``, ``state`` … so fields are
only ever added.  ``format_version`` says which layout a file has:

- format 2 is portable: every string of ``settings`` and
  ``state`` that is the project dir or a path inside it is stored relative
  to the project (``.`` for the project itself), and ``relative_paths``
  lists where those are (key and index lists).  A run moved with its
  project, or copied with it (a CI job restoring the run store into another
  checkout), goes on in the project its run store is in
  (:meth:`Checkpoint.portable` and :meth:`Checkpoint.placed`);
- format 1 held absolute paths; a file without a format is format 1 too
  (written before checkpoints carried one).  It is read by making its paths
  relative to the project dir it names, then placing them as format 2's;
- format 3 has format 2's layout; its state holds the typed records of this
  release (a review's findings); format 4 also a gate's typed evidence.  An
  older state is brought to the graph's state model when the run resumes
  (:meth:`RunState.upgraded <stepkit.graph.state.RunState.upgraded>`, with
  :attr:`Checkpoint.read_format`);
- format 6 (this one) may hold a setting kept apart: a reference to a
  sealed file beside the checkpoint, with its digest, in place of its value
  (:class:`~stepkit.workspace.seal.Apart`, the installed files'
  fingerprint); an older stepkit would read the reference as the value.

A newer format, or a file that is not a checkpoint, is refused with one line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr, ValidationError

from stepkit.errors import UsageError, describe_validation
from stepkit.models import Model

#: The layout this stepkit writes.
CHECKPOINT_FORMAT = 6
#: The layout with absolute paths (and of files without a format).
ABSOLUTE_FORMAT = 1
#: How the stored form names the project dir itself.
PROJECT = "."
#: Where a stored path is: keys and list indexes from the checkpoint's top.
Where = list[str | int]

RunStatus = Literal["running", "paused", "interrupted", "finished"]


class Checkpoint(Model):
    """One run's checkpoint.

    :ivar node: the node entered last; ``phase`` says whether it ``started``
        (and was cut off if the run is not running) or ``finished``, then
        ``next`` is where the run goes on.
    :ivar visits: how often each node was entered (the loop cap counts them).
    :ivar path: the nodes that finished, in order; ``edges`` the
        ``[from, to, route]`` edges taken.
    :ivar pending: the question a paused run waits at.
    :ivar active_s: seconds the run was active (pauses excluded).
    :ivar settings: the run settings, secrets masked.  Among them
        ``gate_plan``: the gate commands (and tracked lockfiles) the run
        fixed at its first gate, which a resume runs again; a setting, not
        a new field, so formats 1 and 2 hold it alike (a checkpoint without
        it gets one at its first gate after the resume); and
        ``start_commands``, each gate's command as chosen when the run
        started, before the coder ran, which the plan keeps wherever the
        step's changes would change it, and ``start_scripts``, the scripts
        those commands ran then (on the verification surface).
    :ivar state: the run state.
    :ivar finishing: what a finished ``--worktree`` run still owes before
        its ending holds (:mod:`stepkit.worktrees.finish`): ``commit`` (the
        approved step is not committed yet; then its merge, when asked) or
        ``merge``; set in the same write as the ending, so no stop can leave
        approved work that nothing finishes.  ``stepkit resume`` finishes it.
    :ivar relative_paths: in the stored form, where ``settings`` and
        ``state`` hold paths relative to the project; empty in memory, where
        every path is absolute.
    """

    # a field a later release adds without a new format is dropped, not refused
    model_config = ConfigDict(extra="ignore")

    format_version: int = Field(default=CHECKPOINT_FORMAT, ge=1)
    run_id: str
    graph: str
    graph_name: str
    settings: dict[str, Any]
    status: RunStatus
    node: str | None = None
    phase: Literal["started", "finished"] | None = None
    next: str | None = None
    visits: dict[str, int] = Field(default_factory=dict)
    path: list[str] = Field(default_factory=list)
    edges: list[list[str]] = Field(default_factory=list)
    pending: dict[str, Any] | None = None
    outcome: str | None = None
    exit_code: int | None = None
    output: str | None = None
    started_at: str
    updated_at: str
    finished_at: str | None = None
    active_s: float = 0.0
    pid: int | None = None
    resumes: int = 0
    finishing: Literal["commit", "merge"] | None = None
    state: dict[str, Any]
    relative_paths: list[Where] = Field(default_factory=list)
    _read_format: int = PrivateAttr(default=CHECKPOINT_FORMAT)

    @property
    def read_format(self) -> int:
        """The format the file was written in (this one for a new run)."""
        return self._read_format

    @classmethod
    def start(
        cls,
        run_id: str,
        graph: str,
        graph_name: str,
        start: str,
        settings: dict[str, Any],
        state: dict[str, Any],
        now: str,
        pid: int,
    ) -> Checkpoint:
        """The checkpoint of a run about to enter its ``start`` node."""
        return cls(
            run_id=run_id,
            graph=graph,
            graph_name=graph_name,
            settings=settings,
            status="running",
            next=start,
            started_at=now,
            updated_at=now,
            pid=pid,
            state=state,
        )

    def portable(self, project: Path | str) -> Checkpoint:
        """This checkpoint as stored: a copy whose paths inside ``project``
        are relative to it and listed in ``relative_paths`` (this one is not
        changed)."""
        root = str(project)
        found: list[Where] = []
        settings = _relative(self.settings, root, ["settings"], found)
        state = _relative(self.state, root, ["state"], found)
        return self.model_copy(
            update={"settings": settings, "state": state, "relative_paths": found}
        )

    def placed(self, project: Path | str) -> Checkpoint:
        """Make this stored checkpoint's relative paths absolute in
        ``project``, the project it is resumed in (in place; returns it)."""
        root = str(project)
        data = {"settings": self.settings, "state": self.state}
        for where in self.relative_paths:
            holder, key = _holder(data, where)
            if holder is not None and isinstance(holder[key], str):
                holder[key] = _absolute(holder[key], root)
        self.relative_paths = []
        return self


def read_checkpoint(text: str, run_id: str, project: Path | str) -> Checkpoint:
    """The checkpoint in ``text`` (a run's ``state.json``), in the current
    format, its paths placed in ``project`` (where its run store is).

    :raises UsageError: one line: the file is in a newer format than this
        stepkit knows, or is not a checkpoint (the first problem).
    """
    not_one = f"run {run_id}: state.json is not a stepkit checkpoint"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{not_one}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{not_one}: not a JSON object")
    version = data.get("format_version", ABSOLUTE_FORMAT)  # absent: written before formats
    if isinstance(version, int) and not isinstance(version, bool) and version > CHECKPOINT_FORMAT:
        raise UsageError(
            f"run {run_id}: checkpoint format {version} is newer than this stepkit "
            f"understands ({CHECKPOINT_FORMAT}); upgrade stepkit"
        )
    try:
        checkpoint = Checkpoint.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"{not_one}: {describe_validation(exc)}") from None
    if version == ABSOLUTE_FORMAT:
        checkpoint = checkpoint.portable(str(checkpoint.settings.get("project_dir") or project))
    checkpoint.format_version = CHECKPOINT_FORMAT
    placed = checkpoint.placed(project)
    placed._read_format = version if isinstance(version, int) else ABSOLUTE_FORMAT
    return placed


def _relative(value: Any, root: str, where: Where, found: list[Where]) -> Any:
    """``value`` with each string that is ``root`` or a path inside it made
    relative (containers copied, nothing else); each one's place in ``found``."""
    if isinstance(value, str):
        relative = _inside(value, root)
        if relative is None:
            return value
        found.append(list(where))
        return relative
    if isinstance(value, dict):
        return {key: _relative(item, root, [*where, key], found) for key, item in value.items()}
    if isinstance(value, list):
        return [_relative(item, root, [*where, index], found) for index, item in enumerate(value)]
    return value


def _inside(text: str, root: str) -> str | None:
    """``text`` relative to ``root`` when it is ``root`` or a path inside it (one line)."""
    if text == root:
        return PROJECT
    prefix = root.rstrip(os.sep) + os.sep
    if text.startswith(prefix) and "\n" not in text and len(text) > len(prefix):
        return text[len(prefix) :]
    return None


def _absolute(relative: str, root: str) -> str:
    return root if relative == PROJECT else root.rstrip(os.sep) + os.sep + relative


def _holder(data: dict[str, Any], where: Where) -> tuple[Any, str | int]:
    """The container that holds the value at ``where``, and its key; (None,
    …) when the place is not there (a hand-edited file)."""
    holder: Any = data
    for key in where[:-1]:
        try:
            holder = holder[key]
        except (KeyError, IndexError, TypeError):
            return None, where[-1]
    key = where[-1]
    try:
        holder[key]
    except (KeyError, IndexError, TypeError):
        return None, key
    return holder, key
