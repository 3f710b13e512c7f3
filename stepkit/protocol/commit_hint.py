"""What STEP_COMPLETE's output ends with: the files the step changed, the
git command that commits them (stepkit never commits; the user does), and
the plan's next step."""

from __future__ import annotations

from pathlib import Path

from stepkit import quoting
from stepkit.protocol.state import StepState
from stepkit.text import commit_paragraphs


def commit_hint(state: StepState, project_dir: Path) -> list[str]:
    """The lines: the step's files (its code, then the plan repo's files the
    step wrote), and ``git add … && git commit -m "<step summary>"``."""
    files = sorted(set(state.changed_files))
    written: list[str | None] = [state.plan_path, state.handoff_path]
    later = {s.step: s.path for s in state.later_steps}
    written += [later.get(a.step) for a in state.applied_annotations]
    if state.plan_path:
        notes = Path(state.plan_path).parent.parent / "NOTES.md"
        written.append(str(notes) if notes.is_file() else None)
    plan_files = [_relative(Path(p), project_dir) for p in written if p]
    everything = [*files, *(p for p in dict.fromkeys(plan_files) if p not in files)]
    if not everything:
        return []
    paragraphs = commit_paragraphs(state.step_summary, state.step, state.title)
    message = " ".join(f"-m {quoting.shell([p])}" for p in paragraphs)
    return [
        "",
        "Files the step changed (stepkit never commits):",
        *(f"- {f}" for f in everything),
        "Commit them with:",
        f"  git add -- {quoting.shell(everything)} && git commit {message}",
    ]


def _relative(path: Path, project_dir: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path(project_dir).resolve()))
    except ValueError:
        return str(path)


def next_step_lines(state: StepState, project_dir: Path) -> list[str]:
    """``Next step: N — title (ready|blocked: …)``, or that the plan is done,
    read from the plan repo as the step left it, by the one rule of where a
    step stands (:mod:`stepkit.planrepo.stepstate`)."""
    from stepkit.engine.pause import last_runs
    from stepkit.errors import PlanError
    from stepkit.planrepo.model import PlanRepo
    from stepkit.planrepo.stepstate import StepStates
    from stepkit.workspace.store import runs_dir

    if not state.plan_path:
        return []
    try:
        repo = PlanRepo.load(Path(state.plan_path).parent.parent)
    except PlanError:
        return []
    states = StepStates(repo, last_runs(runs_dir(project_dir)))
    step = next((s for s in repo.steps if states.to_do(s) and s.number != state.step), None)
    if step is None:
        return ["", "Next step: none; every step of the plan is done."]
    blocked = states.unsatisfied(step)
    how = (
        f"blocked: {'; '.join(blocked)}" if blocked else f"ready: stepkit run --step {step.number}"
    )
    return ["", f"Next step: {step.number} — {step.title} ({how})"]
