"""What a paused run tells its user: the question, its options and the
exact command that answers it; and which runs are paused, and since when."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime
from typing import Any

#: The exit code of a run paused at a question.
PAUSED_EXIT = 5


def resume_command(run_id: str, project_dir: str) -> str:
    """The command that continues ``run_id``."""
    return f"stepkit resume {run_id} --project-dir {shlex.quote(project_dir)}"


def pause_text(run_id: str, project_dir: str, pending: dict[str, Any]) -> str:
    """What a paused run prints: the question, the options and the exact
    command that answers it."""
    node, options = pending["node"], pending.get("options") or []
    resume = f"{resume_command(run_id, project_dir)} --answer"
    lines = ["PAUSED", f"Run {run_id} is waiting for an answer at {node}:", "", pending["question"], ""]
    if pending.get("note"):
        lines[1:1] = [f"The answer was not accepted: {pending['note']}."]
    if options:
        extra = " (or free text)" if pending.get("allow_other") else ""
        lines.append(f"Options: {', '.join(options)}{extra}")
        lines.append("Answer with one of:")
        lines.extend(f'  {resume} "{option}"' for option in options)
    else:
        lines.append("Answer with:")
        lines.append(f'  {resume} "<your answer>"')
    return "\n".join(lines)


def paused_runs(store: Any, now: datetime | None = None) -> list[dict[str, Any]]:
    """The project's paused runs (a :class:`~stepkit.engine.runstore.RunStore`),
    oldest first: ``run_id``, ``step``, ``title``, ``node`` (the question it
    waits at), ``paused_at``, ``age_s``, ``age`` (e.g. ``3 h``), ``run_dir``."""
    now = now or datetime.now(UTC)
    found = []
    for run, checkpoint in store.unfinished():
        if checkpoint.status != "paused":
            continue
        try:
            age = max(0.0, (now - datetime.fromisoformat(checkpoint.updated_at)).total_seconds())
        except (TypeError, ValueError):
            age = 0.0
        state = checkpoint.state
        found.append({"run_id": run.run_id, "step": state.get("step"), "title": state.get("title"),
                      "node": (checkpoint.pending or {}).get("node"), "paused_at": checkpoint.updated_at,
                      "age_s": round(age, 1), "age": human_age(age), "run_dir": str(run.path)})
    return found


def human_age(seconds: float) -> str:
    """``seconds`` as the largest whole unit: ``40 s``, ``3 min``, ``5 h``, ``2 d``."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"
