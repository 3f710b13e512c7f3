"""What a paused run tells its user: the question, its options and the
exact command that answers it; and which runs are paused, and since when."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stepkit import quoting

#: The exit code of a run paused at a question.
PAUSED_EXIT = 5


def resume_command(run_id: str, project_dir: str) -> str:
    """The command that continues ``run_id`` (or a prefix naming it), run
    where this process runs: ``--project-dir`` only when that is not the
    project, relative to it when inside it."""
    project, here = Path(project_dir).resolve(), Path.cwd().resolve()
    if project == here:
        return quoting.shell(["stepkit", "resume", run_id])
    shown = project.relative_to(here) if project.is_relative_to(here) else project
    return quoting.shell(["stepkit", "resume", run_id, "--project-dir", str(shown)])


def pause_text(
    run_id: str, project_dir: str, pending: dict[str, Any], short_id: str | None = None
) -> str:
    """What a paused run prints: the question, the options and the exact
    command that answers each, naming the run by ``short_id`` (a prefix that
    names it alone, default: the run id)."""
    node, options = pending["node"], pending.get("options") or []
    resume = f"{resume_command(short_id or run_id, project_dir)} --answer"
    lines = [
        "PAUSED",
        f"Run {run_id} is waiting for an answer at {node}:",
        "",
        pending["question"],
        "",
    ]
    if pending.get("note"):
        lines[1:1] = [f"The answer was not accepted: {pending['note']}."]
    if options:
        extra = ""
        if pending.get("other_as"):
            extra = f" (any other answer: {pending['other_as']})"
        elif pending.get("allow_other"):
            extra = " (or comments of two words or more)"
        lines.append(f"Options: {', '.join(options)}{extra}")
        lines.append("Answer with one of:")
        lines.extend(f"  {resume} {quoting.shell([option])}" for option in options)
    else:
        lines.append("Answer with:")
        lines.append(f'  {resume} "<your answer>"')
    return "\n".join(lines)


def paused_runs(runs_dir: Path, now: datetime | None = None) -> list[dict[str, Any]]:
    """The paused runs under ``runs_dir`` (a run store's ``runs/``), oldest
    first: ``run_id``, ``step``, ``title``, ``node`` (the question it waits
    at), ``paused_at``, ``age_s``, ``age`` (e.g. ``3 h``), ``run_dir``.

    Read from the sealed checkpoints as plain JSON (``stepkit status`` stays
    light); a checkpoint whose seal does not verify is no paused run."""
    now = now or datetime.now(UTC)
    found = []
    for run_dir, checkpoint in _checkpoints(runs_dir):
        if checkpoint.get("status") != "paused":
            continue
        updated = str(checkpoint.get("updated_at") or "")
        try:
            age = max(0.0, (now - datetime.fromisoformat(updated)).total_seconds())
        except (TypeError, ValueError):
            age = 0.0
        state = checkpoint.get("state") or {}
        found.append(
            {
                "run_id": run_dir.name,
                "step": state.get("step"),
                "title": state.get("title"),
                "node": (checkpoint.get("pending") or {}).get("node"),
                "paused_at": updated,
                "started_at": str(checkpoint.get("started_at") or ""),
                "age_s": round(age, 1),
                "age": human_age(age),
                "run_dir": str(run_dir),
            }
        )
    found.sort(key=lambda run: (run["started_at"], run["run_id"]))
    return found


def last_runs(runs_dir: Path) -> dict[int, dict[str, Any]]:
    """The latest run (by start) of each step under ``runs_dir``: ``run_id``,
    ``status`` (running, paused, interrupted, finished), ``outcome`` (its
    sentinel once finished), ``node`` (the question a paused run waits at).
    Read as :func:`paused_runs` reads; a run whose seal does not verify is
    no run."""
    latest: dict[int, tuple[tuple[str, str], dict[str, Any]]] = {}
    for run_dir, checkpoint in _checkpoints(runs_dir):
        step = (checkpoint.get("state") or {}).get("step")
        if not isinstance(step, int) or isinstance(step, bool):
            continue
        order = (str(checkpoint.get("started_at") or ""), run_dir.name)
        if step not in latest or latest[step][0] < order:
            latest[step] = (
                order,
                {
                    "run_id": run_dir.name,
                    "status": checkpoint.get("status"),
                    "outcome": checkpoint.get("outcome"),
                    "node": (checkpoint.get("pending") or {}).get("node"),
                },
            )
    return {step: run for step, (_, run) in latest.items()}


def _checkpoints(runs_dir: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each run's directory under ``runs_dir`` with its checkpoint as plain
    JSON, by run id; a checkpoint that cannot be read or whose seal does not
    verify is left out."""
    from stepkit.workspace.seal import SealBroken, read_sealed

    try:
        entries = [entry for entry in os.scandir(runs_dir) if entry.is_dir()]
    except OSError:
        return
    for entry in sorted(entries, key=lambda e: e.name):
        try:
            checkpoint = json.loads(read_sealed(Path(entry.path) / "state.json"))
        except (OSError, ValueError, SealBroken):
            continue
        if isinstance(checkpoint, dict):
            yield Path(entry.path), checkpoint


def mixed_steps(paused: list[dict[str, Any]]) -> str | None:
    """Why ``stepkit resume`` without a run id takes none of ``paused``
    (:func:`paused_runs`) when they wait in runs of different steps, naming
    them; None when it may take the latest."""
    if len({run["step"] for run in paused}) <= 1:
        return None
    named = "; ".join(
        f"{run['run_id']} (step {run['step']}, at {run['node']}, paused {run['age']} ago)"
        for run in paused
    )
    return (
        f"{len(paused)} runs of different steps are paused; name the one to resume "
        f"(stepkit resume RUN_ID): {named}"
    )


def human_age(seconds: float) -> str:
    """``seconds`` as the largest whole unit: ``40 s``, ``3 min``, ``5 h``, ``2 d``."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"
