"""What STEP_COMPLETE's output ends with: the files the step changed and the
git command that commits them.  stepkit never commits; the user does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit import quoting
from stepkit.text import commit_subject


def commit_hint(state: dict[str, Any], project_dir: Path) -> list[str]:
    """The lines: the step's files (its code, then the plan repo's files the
    step wrote), and ``git add … && git commit -m "<step summary>"``."""
    files = sorted(set(state.get("changed_files") or []))
    written = [state.get("plan_path"), state.get("handoff_path")]
    later = {s.get("step"): s.get("path") for s in state.get("later_steps") or []}
    written += [later.get(a.get("step")) for a in state.get("applied_annotations") or []]
    if state.get("plan_path"):
        notes = Path(state["plan_path"]).parent.parent / "NOTES.md"
        written.append(str(notes) if notes.is_file() else None)
    plan_files = [_relative(Path(p), project_dir) for p in written if p]
    everything = [*files, *(p for p in dict.fromkeys(plan_files) if p not in files)]
    if not everything:
        return []
    summary = " ".join(str(state.get("step_summary") or f"Step {state.get('step')}").split())
    subject = commit_subject(summary)
    return [
        "",
        "Files the step changed (stepkit never commits):",
        *(f"- {f}" for f in everything),
        "Commit them with:",
        f"  git add -- {quoting.shell(everything)} && git commit -m {quoting.shell([subject])}",
    ]


def _relative(path: Path, project_dir: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path(project_dir).resolve()))
    except ValueError:
        return str(path)
