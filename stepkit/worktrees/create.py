"""The work tree and branch of a ``--worktree`` run, made before it starts.

The step is resolved from the plan repo as the base commit holds it (read
with ``git archive``, nothing checked out), so the branch can be named
``stepkit/<NN>-<slug>`` before anything is created.  Then ``git worktree
add -b`` makes the branch and its work tree in one git call: the user's
work tree, index and HEAD are never touched (no checkout, stash, reset or
add there).  Its dependencies are then prepared
(:mod:`stepkit.worktrees.prepare`).  A work tree whose run never started is
removed again (:func:`isolated`), so a usage error leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import io
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from stepkit.errors import PlanError, UsageError
from stepkit.planrepo.mergesetup import register_merge_driver
from stepkit.planrepo.model import PlanRepo, StepPlan
from stepkit.workspace.scope import git
from stepkit.workspace.store import git_location, runs_dir
from stepkit.workspace.worktree_record import WorktreeRecord, records, write_record
from stepkit.worktrees.layout import branch_name, step_name, worktrees_home
from stepkit.worktrees.prepare import prepare


def open_worktree(
    project: Path,
    plans_dir: Path,
    step_request: str,
    prompt: str,
    *,
    merge: bool = False,
    base: str | None = None,
) -> WorktreeRecord:
    """Create the branch and work tree of a run of ``project``'s step.

    :param plans_dir: the plan repo in the user's tree (absolute); the run
        reads the same path inside the work tree.
    :param base: the ref the branch starts from (default ``HEAD``).
    :raises UsageError: not a git work tree, no such commit, the plan repo
        is not tracked there, the step cannot be resolved, its branch or
        work tree is already there, or its record cannot be written.
        Creation is all or nothing: whatever fails or interrupts it after
        git made the branch and work tree removes both again.
    """
    project = Path(project).resolve()
    located = git_location(project)
    if located is None:
        raise UsageError(f"--worktree needs a git repository; {project} is in none")
    top, common, _ = located
    ref = base or "HEAD"
    commit = git.resolve_commit(top, ref)
    if commit is None:
        raise UsageError(
            f"--worktree: {ref} names no commit to branch from (commit something first)"
        )
    plans_rel = _tracked_plans(top, project, Path(plans_dir), commit, ref)
    step = _resolve_step(top, commit, plans_rel, step_request, prompt)
    branch = branch_name(step.number, step.slug)
    path = worktrees_home(common) / step_name(step.number, step.slug)
    _refuse_owing(common, branch)
    _refuse_existing(top, branch, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    code, _, err = git.call(["worktree", "add", "-q", "-b", branch, str(path), commit], top)
    if code != 0:
        raise UsageError(
            f"--worktree: cannot create {path} on {branch}: "
            f"{git.last_error(err, 'git worktree add failed')}"
        )
    try:
        record = _record(project, Path(plans_dir), top, path, branch, commit, step.number, merge)
        return prepare(record)
    except BaseException:  # a crash or Ctrl-C too: the branch and work tree go with it
        _remove(top, path, branch)
        raise


def _record(
    project: Path,
    plans_dir: Path,
    top: Path,
    path: Path,
    branch: str,
    commit: str,
    step: int,
    merge: bool,
) -> WorktreeRecord:
    """The rest of :func:`open_worktree` once git made the branch and work
    tree: the merge driver, and the record that makes the work tree stepkit's.

    :raises UsageError: the record cannot be written."""
    _register_merge_driver(project, plans_dir)
    record = WorktreeRecord(
        path=str(path),
        project=str(path / project.relative_to(top)),
        origin=str(project),
        origin_top=str(top),
        branch=branch,
        base=commit,
        step=step,
        plans=str(plans_dir.resolve().relative_to(project)),
        merge=merge,
    )
    try:
        write_record(path, record)
    except OSError as exc:
        raise UsageError(f"--worktree: cannot record {path}: {exc}") from None
    return record


@contextmanager
def isolated(
    project: Path,
    plans_dir: Path,
    step_request: str,
    prompt: str,
    *,
    merge: bool = False,
    base: str | None = None,
) -> Iterator[WorktreeRecord]:
    """:func:`open_worktree`, removed again (with its branch) when what runs
    inside the block fails before a run was created in it."""
    record = open_worktree(project, plans_dir, step_request, prompt, merge=merge, base=base)
    try:
        yield record
    except BaseException:
        if not _has_runs(record):
            discard(record)
        raise


def discard(record: WorktreeRecord) -> None:
    """Remove a work tree in which no run started, and its branch."""
    _remove(Path(record.origin_top), Path(record.path), record.branch)


def _remove(top: Path, path: Path, branch: str) -> None:
    """Remove the work tree at ``path`` (with its record, in git's admin
    directory of it) and ``branch``."""
    git.worktree_remove(top, path)
    git.call(["branch", "-D", branch], top)


def _tracked_plans(top: Path, project: Path, plans_dir: Path, commit: str, ref: str) -> str:
    """The plan repo's path in the repository, when ``commit`` tracks it.

    :raises UsageError: it is outside the project, or not tracked there."""
    plans = plans_dir.resolve()
    try:
        plans.relative_to(project)
        rel = plans.relative_to(top).as_posix()
    except ValueError:
        raise UsageError(
            f"--worktree: the plan repo {plans_dir} is outside the project {project}, "
            "so the work tree has no copy of it"
        ) from None
    if not git.run(["ls-tree", "-d", "--name-only", commit, "--", rel], top):
        raise UsageError(
            f"--worktree: the plan repo {rel} is not tracked at {ref}; commit it first "
            f"(the step runs on a checkout of {ref})"
        )
    return rel


def _resolve_step(
    top: Path, commit: str, plans_rel: str, step_request: str, prompt: str
) -> StepPlan:
    """The step the run will take, read from the plan repo at ``commit``.

    :raises UsageError: it cannot be resolved there."""
    archive = git.run(["archive", "--format=tar", commit, "--", plans_rel], top)
    if archive is None:
        raise UsageError(f"--worktree: cannot read the plan repo {plans_rel} at {commit[:12]}")
    with tempfile.TemporaryDirectory(prefix="stepkit-plans-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        try:
            step, _ = PlanRepo.load(Path(tmp) / plans_rel).choose(step_request, prompt)
        except PlanError as exc:
            raise UsageError(f"{exc}; no run was started") from None
    return step


def _refuse_owing(common: Path, branch: str) -> None:
    """:raises UsageError: ``branch``'s work tree holds a run that was
    approved and stopped before its commit or merge (the one command that
    finishes it is named: deleting the branch would lose the approved step)."""
    _refuse_owing_where(common, lambda record: record.branch == branch, "--worktree")


def refuse_owing_step(project: Path, step: int) -> None:
    """Any run of step ``step`` (in the user's tree too, ``--rerun`` or not):
    refused while a work tree of it holds an approved run that still owes
    its commit or merge, so the approved change is finished, never redone.

    :raises UsageError: naming the ``stepkit resume`` that finishes it."""
    located = git_location(Path(project).resolve())
    if located is not None:
        _refuse_owing_where(located[1], lambda record: record.step == step, "run")


def _refuse_owing_where(common: Path, matches: Callable[[WorktreeRecord], bool], who: str) -> None:
    from datetime import UTC, datetime

    from stepkit.worktrees.listing import latest_run

    for record in records(common):
        if not matches(record):
            continue
        run = latest_run(record, datetime.now(UTC))
        if run["finishing"]:
            raise UsageError(
                f"{who}: step {record.step} was approved on {record.branch} but its "
                f"{run['finishing']} was not made; finish it with: stepkit resume {run['run_id']}"
            )


def _refuse_existing(top: Path, branch: str, path: Path) -> None:
    """:raises UsageError: the branch or the work tree directory is already there."""
    if git.run(["rev-parse", "-q", "--verify", f"refs/heads/{branch}"], top) is not None:
        raise UsageError(
            f"--worktree: branch {branch} already exists; resume the run that owns it "
            f"(stepkit status lists it), or merge it (git merge {branch}) or delete it "
            f"(git branch -D {branch}) first"
        )
    if path.exists():
        raise UsageError(
            f"--worktree: {path} already exists; resume the run that owns it "
            f"(stepkit status lists it), or remove it (git worktree remove {path}) first"
        )


def _has_runs(record: WorktreeRecord) -> bool:
    runs = runs_dir(Path(record.project))
    return runs.is_dir() and any(runs.iterdir())


def _register_merge_driver(project: Path, plans_dir: Path) -> None:
    """The plan merge driver, so that merging this branch keeps every
    branch's NOTES facts and Edge-cases annotations (as ``stepkit init``
    registers it); a repository whose config cannot be written merges
    without it, which git shows as a conflict, never as a loss."""
    with contextlib.suppress(OSError):
        register_merge_driver(project, plans_dir)
