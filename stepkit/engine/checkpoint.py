"""The checkpoint: everything a run needs to go on after a pause, a Ctrl-C
or a kill, saved as the run's ``state.json`` after every node.

Its keys are part of the run store's contract (DESIGN.md): programs outside
stepkit read ``status``, ``outcome``, ``pending``, ``state`` … so fields are
only ever added.  ``format_version`` says which layout a file has: a file
without one was written before checkpoints carried it (the same fields) and
is read as format 1; a newer format, or a file that is not a checkpoint, is
refused with one line.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stepkit.errors import UsageError, describe_validation

#: The layout this stepkit writes.
CHECKPOINT_FORMAT = 1

RunStatus = Literal["running", "paused", "interrupted", "finished"]


class Checkpoint(BaseModel):
    """One run's checkpoint.

    :ivar node: the node entered last; ``phase`` says whether it ``started``
        (and was cut off if the run is not running) or ``finished``, then
        ``next`` is where the run goes on.
    :ivar visits: how often each node was entered (the loop cap counts them).
    :ivar path: the nodes that finished, in order; ``edges`` the
        ``[from, to, route]`` edges taken.
    :ivar pending: the question a paused run waits at.
    :ivar active_s: seconds the run was active (pauses excluded).
    :ivar settings: the run settings, secrets masked.
    :ivar state: the run state.
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
    state: dict[str, Any]

    @classmethod
    def start(cls, run_id: str, graph: str, graph_name: str, start: str, settings: dict[str, Any],
              state: dict[str, Any], now: str, pid: int) -> Checkpoint:
        """The checkpoint of a run about to enter its ``start`` node."""
        return cls(run_id=run_id, graph=graph, graph_name=graph_name, settings=settings, status="running",
                   next=start, started_at=now, updated_at=now, pid=pid, state=state)


def read_checkpoint(text: str, run_id: str) -> Checkpoint:
    """The checkpoint in ``text`` (a run's ``state.json``), in the current format.

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
    version = data.get("format_version", CHECKPOINT_FORMAT)  # absent: written before formats
    if isinstance(version, int) and not isinstance(version, bool) and version > CHECKPOINT_FORMAT:
        raise UsageError(f"run {run_id}: checkpoint format {version} is newer than this stepkit "
                         f"understands ({CHECKPOINT_FORMAT}); upgrade stepkit")
    try:
        return Checkpoint.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"{not_one}: {describe_validation(exc)}") from None
