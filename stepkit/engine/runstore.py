"""The runs of a project: ``runs/<run_id>/`` of its run store (where that
is: :mod:`stepkit.workspace.store`).

Each run directory holds ``state.json`` (the
:class:`~stepkit.engine.checkpoint.Checkpoint`, replaced atomically after
every node (:mod:`stepkit.engine.driver` says when it is also flushed to the disk); :meth:`RunDir.save` and :meth:`RunDir.load` are the one way it is
written and read), ``events.jsonl`` (one JSON object per line, appended and
flushed as it happens), ``logs/`` (full gate and coder output) and
``output.txt`` (the end node's text).

The checkpoint is sealed (:mod:`stepkit.workspace.seal`): one a coder forged
or edited, or whose seal it deleted, is refused by name, never resumed.
A setting that is an :class:`~stepkit.workspace.seal.Apart` (the installed
files' fingerprint, most of a checkpoint's size) is written once as a sealed
``<setting>.json`` beside it, the checkpoint holding its digest: a part
edited or swapped is refused as an edited checkpoint is
(:meth:`RunDir.read_parts`, when the run goes on).

Secrets: events and the output go through :func:`stepkit.workspace.redact.redact`.
The checkpoint is rewritten after every node, so a full redaction pass over
it each time would cost O(state) per node; instead the engine redacts every
value as it enters the state (see :func:`redacted`), and :meth:`RunDir.save`
only re-checks the text for the values of secret environment variables.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO

from stepkit.engine.checkpoint import Checkpoint, read_checkpoint
from stepkit.engine.lock import live_holder
from stepkit.errors import UsageError
from stepkit.jsontext import dumps, json_safe, model_json
from stepkit.workspace.files import atomic_write, new_stamped_dir, sync
from stepkit.workspace.redact import redact, secret_env_values
from stepkit.workspace.seal import (
    Apart,
    SealBroken,
    is_apart,
    read_apart,
    read_sealed,
    write_apart,
    write_sealed,
)
from stepkit.workspace.store import ensure_store

UNFINISHED = ("paused", "interrupted", "running")
#: What a run id may look like: one directory name, never ``..`` or a path.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


class RunDir:
    """One run's directory: checkpoint, events, logs, output.

    :param project: the project whose run store holds it: the checkpoint's
        paths are stored relative to it and placed in it when read.
    """

    def __init__(self, path: Path, project: Path):
        self.path = path
        self.project = project
        self.run_id = path.name
        self.logs = path / "logs"
        self._events: TextIO | None = None
        self._lock = threading.Lock()
        #: parts written apart not yet flushed to the disk (the next durable save does)
        self._unsynced: list[Path] = []

    @property
    def state_file(self) -> Path:
        return self.path / "state.json"

    def save(self, checkpoint: Checkpoint, durable: bool = True) -> None:
        """Write the checkpoint atomically (temp file, rename: never torn),
        its paths relative to the project, and seal it; ``durable``: flushed
        to the disk (fsync) before the rename, so a power loss keeps it.
        Each :class:`~stepkit.workspace.seal.Apart` setting is written
        beside it the first time, and only referred to after."""
        settings = {
            key: self._part(key, value, durable) if isinstance(value, Apart) else value
            for key, value in checkpoint.settings.items()
        }
        if durable:
            for path in self._unsynced:
                sync(path)  # a checkpoint on the disk never refers to a part that is not
            self._unsynced.clear()
        stored = checkpoint.model_copy(update={"settings": settings}).portable(self.project)
        text = model_json(stored, fallback=jsonable)
        if any(value in text for value in secret_env_values()):
            text = redact(text)  # the same secret-env list redact() masks
        write_sealed(self.state_file, text, durable=durable)

    def _part(self, key: str, part: Apart, durable: bool) -> dict[str, str]:
        """The reference the checkpoint holds for the setting ``key``, ``part``
        written beside it first if it never was (redacted whole, once: it
        is not among the values the engine redacts as they enter)."""
        if part.reference is None:
            path = self.path / f"{key}.json"
            part.reference = write_apart(path, redact(dumps(dict(part))), durable=durable)
            if not durable:
                self._unsynced.append(path)
        return part.reference

    def read_parts(self, checkpoint: Checkpoint) -> None:
        """Put back in ``checkpoint``'s settings each part written apart
        (:meth:`save`), before the run goes on.

        :raises UsageError: a part is missing, or is not the one stepkit
            wrote for this checkpoint (edited, forged, another's).
        """
        for key, value in list(checkpoint.settings.items()):
            if not is_apart(value):
                continue
            try:
                part = Apart(json.loads(read_apart(self.path, value)))
            except SealBroken as exc:
                raise UsageError(
                    f"run {self.run_id}: its checkpoint is not the one stepkit wrote, "
                    f"so it is not resumed: {exc}"
                ) from None
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise UsageError(f"run {self.run_id}: cannot read its checkpoint: {exc}") from None
            part.reference = value
            checkpoint.settings[key] = part

    def load(self) -> Checkpoint:
        """The last checkpoint, its paths in this project (one in an older
        format reads as the current one).

        :raises UsageError: the run has no readable checkpoint, it is not the
            one stepkit wrote (forged, edited, its seal gone), or its format
            is newer than this stepkit knows.
        """
        try:
            text = read_sealed(self.state_file)
        except SealBroken as exc:
            raise UsageError(
                f"run {self.run_id}: its checkpoint is not the one stepkit wrote, "
                f"so it is not resumed: {exc}"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"run {self.run_id}: cannot read its checkpoint: {exc}") from None
        return read_checkpoint(text, self.run_id, self.project)

    def event(self, name: str, /, **fields: Any) -> None:
        """Append one event line (``{"t", "event", **fields}``) and flush it."""
        record = {"t": round(time.time(), 3), "event": name}
        record.update((k, v) for k, v in fields.items() if k not in record)
        line = json_safe(redact(json.dumps(record, ensure_ascii=False, default=jsonable))) + "\n"
        with self._lock:
            if self._events is None:
                # held open for the run: one open per event would dominate the overhead
                self._events = open(self.path / "events.jsonl", "a", encoding="utf-8")  # noqa: SIM115
            self._events.write(line)
            self._events.flush()

    def write_output(self, text: str) -> None:
        """The end node's text, as ``output.txt``."""
        atomic_write(self.path / "output.txt", redact(text))

    def close(self) -> None:
        """Close the event log (a later event reopens it)."""
        with self._lock:
            if self._events is not None:
                self._events.close()
                self._events = None


class RunStore:
    """The runs of one project."""

    def __init__(self, project_dir: Path):
        self.project = Path(project_dir)
        self.root = ensure_store(self.project)
        self.runs = self.root / "runs"

    def create(self) -> RunDir:
        """A new, empty run directory with a time-sortable id."""
        run = RunDir(new_stamped_dir(self.runs), self.project)
        run.logs.mkdir()
        return run

    def open(self, run_id: str) -> RunDir:
        """An existing run, by its id or any prefix of it that names one run.

        :raises UsageError: ``run_id`` is not a run id (``..``, a path), there
            is no such run in this project, or the prefix names several
            (they are named).
        """
        if not RUN_ID.fullmatch(run_id or ""):
            raise UsageError(
                f"{run_id!r} is not a run id (a directory name under {self.runs}, "
                "e.g. 20261201-101500-ab12)"
            )
        path = self.runs / run_id
        if not (path / "state.json").is_file():
            matches = [other for other in self.run_ids() if other.startswith(run_id)]
            if len(matches) > 1:
                raise UsageError(
                    f"run id '{run_id}' is the start of {len(matches)} runs: "
                    f"{', '.join(matches)}; give more of it"
                )
            if not matches:
                gone = (
                    " (its directory is there: its checkpoint was deleted)" if path.is_dir() else ""
                )
                raise UsageError(
                    f"no run '{run_id}' in {self.runs}{gone}; stepkit status lists the runs"
                )
            path = self.runs / matches[0]
        return RunDir(path, self.project)

    def run_ids(self) -> list[str]:
        """Every run with a checkpoint, oldest first."""
        return run_ids_in(self.runs)

    def latest_unfinished(self) -> RunDir:
        """The most recently started run that is paused, interrupted, was
        killed while running, or finished owing its commit or merge.

        :raises UsageError: there is none.
        """
        found, refused = self._unfinished()
        if not found:
            unreadable = f" ({'; '.join(refused)})" if refused else ""
            raise UsageError(
                f"no paused or interrupted run in {self.runs}{unreadable}; stepkit run starts one "
                "(--project-dir names another project)"
            )
        return found[-1][0]

    def unfinished(self) -> list[tuple[RunDir, Checkpoint]]:
        """The runs that are paused, interrupted, were killed while running or
        finished owing their commit or merge (``finishing``; not live ones,
        nor unreadable ones), with their checkpoints, the
        most recently started last."""
        return self._unfinished()[0]

    def _unfinished(self) -> tuple[list[tuple[RunDir, Checkpoint]], list[str]]:
        """:meth:`unfinished`, and why each run that could not be read was refused."""
        found, refused = [], []
        for run_id in self.run_ids():
            run = RunDir(self.runs / run_id, self.project)
            try:
                checkpoint = run.load()
            except UsageError as exc:
                refused.append(str(exc))
                continue
            owes = checkpoint.finishing is not None  # approved, its commit or merge not made
            if (checkpoint.status in UNFINISHED or owes) and not is_live(run, checkpoint):
                found.append((run, checkpoint))
        return sorted(found, key=lambda pair: (pair[1].started_at, pair[0].run_id)), refused


def run_ids_in(runs: Path) -> list[str]:
    """Every run with a checkpoint under ``runs`` (a store's ``runs/``), oldest first."""
    if not runs.is_dir():
        return []
    return sorted(p.name for p in runs.iterdir() if (p / "state.json").is_file())


def short_run_id(run: RunDir) -> str:
    """The shortest of the run id's date and minute, its date and second,
    or the whole id that names only ``run`` in its store (as
    :meth:`RunStore.open` reads a prefix): what a command shown to the user
    names it by."""
    others = [other for other in run_ids_in(run.path.parent) if other != run.run_id]
    for length in (13, 15):  # 20261206-1401, 20261206-140115
        prefix = run.run_id[:length]
        if len(prefix) < len(run.run_id) and not any(o.startswith(prefix) for o in others):
            return prefix
    return run.run_id


def is_live(run: RunDir, checkpoint: Checkpoint) -> bool:
    """True when another live process is running ``run`` now: its checkpoint
    says running and the project's lock is held by a command working on it.
    The lock is the only judge (see :mod:`stepkit.engine.lock`): a killed
    run's checkpoint still says running, but its lock died with it."""
    if checkpoint.status != "running":
        return False
    holder = live_holder(run.project)
    return holder is not None and holder.run_id == run.run_id and holder.pid != os.getpid()


def redacted(value: Any, env: tuple[str, ...] | None = None) -> Any:
    """``value`` with every string in it (at any depth) redacted."""
    # the secret values are read once per walk, not once per string: a
    # checkpoint holds hundreds of strings, and reading them costs ~0.1 ms
    env = secret_env_values() if env is None else env
    if isinstance(value, str):
        return _redacted_text(value, env)
    if isinstance(value, Apart):
        return value  # redacted whole as it is written (RunDir.save), not at every save
    if isinstance(value, dict):
        return {k: redacted(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, env) for v in value]
    return value


#: Strings :func:`_redacted_text` remembers: more than a run's settings
#: hold (a checkpoint written before the installed files' fingerprint was
#: kept apart holds thousands of hashes inline), which are walked in the
#: same order at every save, so a smaller cache would evict each one just
#: before it is asked for again.
_REMEMBERED = 1 << 16


@lru_cache(maxsize=_REMEMBERED)
def _redacted_text(text: str, env: tuple[str, ...]) -> str:
    """:func:`redact` of ``text``, remembered: the engine saves the run's
    settings after every node, and they are the same strings (the installed
    files' hashes) each time."""
    return redact(text, env)


def jsonable(value: Any) -> Any:
    """JSON form of the values plugins put in state: pydantic models, paths, sets."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
