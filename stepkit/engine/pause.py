"""What a paused run tells its user: the question, its options and the
exact command that answers it."""

from __future__ import annotations

import shlex
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
