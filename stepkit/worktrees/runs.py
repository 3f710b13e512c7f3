"""The runs of a repository's stepkit work trees, for ``stepkit resume``
from the user's tree: each work tree's run store is its own
(:mod:`stepkit.workspace.store`), so a run is found by looking in every
store of the same git common dir."""

from __future__ import annotations

from pathlib import Path

from stepkit.engine.pause import mixed_steps, paused_runs
from stepkit.engine.runstore import RUN_ID, RunStore, run_ids_in
from stepkit.errors import UsageError
from stepkit.workspace.store import git_location, runs_dir
from stepkit.workspace.worktree_record import records


def run_projects(project: Path) -> list[Path]:
    """``project``, then the project dir of each stepkit work tree of its repository."""
    project = Path(project).resolve()
    located = git_location(project)
    if located is None:
        return [project]
    others = [Path(r.project) for r in records(located[1])]
    return [project, *(p for p in others if p.is_dir() and p.resolve() != project)]


def run_project(project: Path, run_id: str | None) -> Path:
    """The project whose run store holds ``run_id`` (``project`` when none
    does, so the error names the user's store); without a run id, the one
    holding the run ``stepkit resume`` continues by default: the latest
    unfinished run of any store.

    :raises UsageError: no run id, and paused runs of different steps wait
        (in any of the stores); they are named."""
    projects = run_projects(project)
    if len(projects) == 1:
        return projects[0]
    if run_id is not None:
        if RUN_ID.fullmatch(run_id):
            for candidate in projects:  # a prefix, as RunStore.open reads one
                if any(found.startswith(run_id) for found in run_ids_in(runs_dir(candidate))):
                    return candidate
        return projects[0]
    refusal = mixed_steps(
        sorted(
            (run for p in projects for run in paused_runs(runs_dir(p))),
            key=lambda run: (run["started_at"], run["run_id"]),
        )
    )
    if refusal:
        raise UsageError(refusal)
    latest = max(
        (
            (checkpoint.started_at, run.run_id, candidate)
            for candidate in projects
            for run, checkpoint in RunStore(candidate).unfinished()
        ),
        default=None,
    )
    return projects[0] if latest is None else latest[2]
