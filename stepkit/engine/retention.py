"""How long finished runs' logs are kept: ``stepkit gc`` and the end of
every run (``[logs] keep_days`` and ``keep_runs``).

Only the logs of a *finished* run are pruned (its ``logs/``): never a
paused, interrupted or live run's, nor one still owing its commit or merge,
nor one whose checkpoint cannot be read; never a checkpoint, an event log
or an output, which ``stepkit status``, ``resume`` and ``undo`` read.  A
run is old by when it last wrote its checkpoint (``state.json``'s time),
the newest by its id (time-sortable).  The logs of the finished runs that
are kept, but the newest's (whose paths a run just printed), are
compressed, each one above :data:`GZIP_ABOVE` bytes, to ``<name>.gz`` (:mod:`stepkit.workspace.loglines` reads either).
"""

from __future__ import annotations

import gzip
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from stepkit.engine.runstore import UNFINISHED, RunDir, RunStore, is_live
from stepkit.errors import UsageError

#: A finished run's log above this many bytes is kept gzipped.
GZIP_ABOVE = 1_000_000
_DAY_S = 86_400


@dataclass
class Pruned:
    """What one pass did: the runs whose logs were removed, bytes freed,
    logs compressed, and the runs left alone (unfinished or unreadable)."""

    runs: list[str] = field(default_factory=list)
    freed: int = 0
    compressed: int = 0
    skipped: list[str] = field(default_factory=list)


def prune_logs(
    store: RunStore, keep_days: float, keep_runs: int, now: float | None = None
) -> Pruned:
    """Remove the logs of finished runs older than ``keep_days`` (0: none by
    age) or past the newest ``keep_runs`` finished ones (0: any number);
    compress the large logs of those kept."""
    now = time.time() if now is None else now
    pruned = Pruned()
    finished: list[RunDir] = []
    for run_id in store.run_ids():
        run = RunDir(store.runs / run_id, store.project)
        try:
            checkpoint = run.load()
        except UsageError:
            pruned.skipped.append(run_id)
            continue
        if (
            checkpoint.status in UNFINISHED
            or checkpoint.finishing is not None
            or is_live(run, checkpoint)
        ):
            pruned.skipped.append(run_id)
            continue
        finished.append(run)
    newest_first = finished[::-1]
    for rank, run in enumerate(newest_first):
        age_days = (now - run.state_file.stat().st_mtime) / _DAY_S
        if (keep_runs and rank >= keep_runs) or (keep_days and age_days > keep_days):
            freed = _remove_logs(run.logs)
            if freed:
                pruned.runs.append(run.run_id)
                pruned.freed += freed
        elif rank:  # the newest run's paths were just printed (--json): left as they are
            pruned.compressed += _compress_logs(run.logs)
    return pruned


def _remove_logs(logs: Path) -> int:
    """Empty ``logs/``; the bytes it held."""
    if not logs.is_dir():
        return 0
    freed = 0
    for entry in list(logs.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            freed += sum(f.stat().st_size for f in entry.rglob("*") if f.is_file())
            shutil.rmtree(entry)
        else:
            freed += entry.lstat().st_size
            entry.unlink()
    return freed


def _compress_logs(logs: Path) -> int:
    """Gzip each ``*.log`` in ``logs/`` above :data:`GZIP_ABOVE` bytes; how many."""
    count = 0
    for log in sorted(logs.glob("*.log")) if logs.is_dir() else ():
        if log.is_symlink() or log.stat().st_size <= GZIP_ABOVE:
            continue
        packed = log.with_name(log.name + ".gz")
        with log.open("rb") as source, gzip.open(packed, "wb", compresslevel=6) as target:
            shutil.copyfileobj(source, target, 1 << 20)
        log.unlink()
        count += 1
    return count


def prune_after_run(project: Path) -> Pruned | None:
    """:func:`prune_logs` by the project's ``[logs]`` settings, at the end of
    a run (the run itself is finished, newest and kept).  A prune that fails
    (a file another process holds, a settings file changed meanwhile) is
    left for ``stepkit gc``: it never changes how the run ended."""
    from stepkit.config import load_config

    try:
        logs = load_config(project).logs
        return prune_logs(RunStore(project), logs.keep_days, logs.keep_runs)
    except (OSError, UsageError):
        return None
