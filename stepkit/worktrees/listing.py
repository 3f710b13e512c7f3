"""What ``stepkit status`` shows of ``--worktree`` runs: the steps running
or paused (or kept after failing) in stepkit work trees, and the steps
complete on ``stepkit/*`` branches not yet merged into HEAD.

It stays as light as the rest of ``stepkit status``: no pydantic (of the
scope package only its git module is loaded), and no git process at all
when the repository has no ``stepkit/`` branch (read from the refs in the
git directory).  Checkpoints are read as plain JSON, as
:func:`stepkit.engine.pause.paused_runs` reads them.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stepkit import quoting
from stepkit.engine.pause import human_age
from stepkit.workspace.scope import git
from stepkit.workspace.seal import SealBroken, read_sealed
from stepkit.workspace.store import git_location, lock_files, runs_dir
from stepkit.workspace.worktree_record import COMMITS_AT, WorktreeRecord, records
from stepkit.worktrees.layout import BRANCH_PREFIX


def worktree_status(
    project_dir: Path, plans_dir: Path, now: datetime | None = None
) -> dict[str, list[dict]]:
    """``worktree_runs`` (one per stepkit work tree: ``branch``, ``worktree``,
    ``step``, ``run_id``, ``state``, ``outcome``, ``node``, ``age``, ``age_s``,
    ``run_dir``, ``finishing``: the commit or merge an approved run still
    owes) and ``unmerged_branches`` (``branch``, ``step``, ``title``,
    ``status``, ``commit``) of the repository holding ``project_dir``."""
    located = git_location(Path(project_dir).resolve())
    if located is None:
        return {"worktree_runs": [], "unmerged_branches": []}
    top, common, _ = located
    return {
        "worktree_runs": [
            latest_run(record, now or datetime.now(UTC)) for record in records(common)
        ],
        "unmerged_branches": _unmerged(top, common, Path(plans_dir)),
    }


def render_worktrees(report: dict[str, list[dict]]) -> str:
    """The two lists as text ('' when both are empty)."""
    lines: list[str] = []
    runs, branches = report["worktree_runs"], report["unmerged_branches"]
    if runs:
        lines += ["", f"Steps in work trees ({len(runs)}):"]
        for run in runs:
            state = run["state"] + (f" at {run['node']}" if run["state"] == "paused" else "")
            age = f"  {run['age']} ago" if run["age"] else ""
            then = (
                f"  (stepkit resume {run['run_id']})"
                if run["state"] in (*RESUMABLE, *OWING.values())
                else ""
            )
            lines.append(
                f"  {run['branch']}  step {run['step']}  run {run['run_id'] or '-'}  {state}{age}{then}"
            )
            lines.append(f"    {run['worktree']}")
            if run["state"] in OWING.values():
                lines.append(
                    f"    approved: finish it with stepkit resume {run['run_id']} "
                    f"(it makes the {run['finishing']}; nothing runs again)"
                )
            elif run["state"] not in ("running", *RESUMABLE) and run["outcome"] != COMMITS_AT:
                # advice to print, never run here: git words and quoted arguments
                remove = quoting.shell(["--force", run["worktree"]])
                drop = quoting.shell(["-D", run["branch"]])
                lines.append(
                    f"    to start the step over, drop what it holds: "
                    f"git worktree remove {remove} && git branch {drop}"
                )
    if branches:
        lines += ["", f"Steps complete on branches not merged into HEAD ({len(branches)}):"]
        lines += [
            f"  {b['branch']}  step {b['step']}{'  ' + b['title'] if b['title'] else ''}"
            f"  (git merge {b['branch']})"
            for b in branches
        ]
    return "\n".join(lines)


#: The states ``stepkit resume`` continues.
RESUMABLE = ("paused", "interrupted")
#: The state of an approved run stopped before its commit or merge, by what it owes.
OWING = {"commit": "approved, not committed", "merge": "committed, not merged"}


def latest_run(record: WorktreeRecord, now: datetime) -> dict[str, Any]:
    """The work tree's latest run and the state it is in."""
    entry: dict[str, Any] = {
        "branch": record.branch,
        "worktree": record.path,
        "step": record.step,
        "run_id": None,
        "state": "no run",
        "outcome": None,
        "node": None,
        "age": None,
        "age_s": None,
        "run_dir": None,
        "finishing": None,
    }
    runs = runs_dir(Path(record.project))
    try:
        latest = max(e.name for e in os.scandir(runs) if e.is_dir())
        checkpoint = json.loads(read_sealed(runs / latest / "state.json"))
    except (OSError, ValueError, SealBroken):
        return entry
    if not isinstance(checkpoint, dict):
        return entry
    status, outcome = checkpoint.get("status"), checkpoint.get("outcome")
    finishing = checkpoint.get("finishing")
    if status == "running":
        status = "running" if _lock_held(Path(record.project)) else "interrupted"
    elif status == "finished" and finishing in OWING:
        status = "running" if _lock_held(Path(record.project)) else OWING[finishing]
    elif status == "finished":
        status = str(outcome or "finished").lower()
    try:
        age = max(
            0.0, (now - datetime.fromisoformat(str(checkpoint.get("updated_at")))).total_seconds()
        )
    except (TypeError, ValueError):
        age = None
    entry.update(
        run_id=latest,
        state=status,
        outcome=outcome,
        node=(checkpoint.get("pending") or {}).get("node"),
        age=human_age(age) if age is not None else None,
        age_s=round(age, 1) if age is not None else None,
        run_dir=str(runs / latest),
        finishing=finishing if finishing in OWING else None,
    )
    return entry


def _lock_held(project: Path) -> bool:
    """Whether a live process holds ``project``'s lock, probed as
    :func:`stepkit.engine.lock.live_holder` does (under the holder record's
    flock, so a command taking the lock at that moment is never refused for
    the probe), without reading the record (that needs pydantic)."""
    lock_file, record_file = lock_files(project)
    if not lock_file.is_file():
        return False
    try:
        record_fd = os.open(record_file, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        fcntl.flock(record_fd, fcntl.LOCK_EX)
        fd = os.open(lock_file, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False
    except OSError:
        return False
    finally:
        os.close(record_fd)


def _unmerged(top: Path, common: Path, plans_dir: Path) -> list[dict[str, Any]]:
    """The ``stepkit/`` branches not merged into HEAD whose step file there says complete."""
    if not _has_stepkit_refs(common):
        return []
    listed = git.run(
        [
            "for-each-ref",
            "--no-merged",
            "HEAD",
            "--format=%(refname:short) %(objectname)",
            "refs/heads/" + BRANCH_PREFIX,
        ],
        top,
    )
    branches = [line.split(" ", 1) for line in git.text(listed or b"").splitlines() if " " in line]
    try:
        plans = plans_dir.resolve().relative_to(top).as_posix()
    except ValueError:
        return []
    wanted = [
        (branch, commit, f"{plans}/steps/{branch.removeprefix(BRANCH_PREFIX)}.md")
        for branch, commit in branches
    ]
    texts = git.blobs(top, [f"{commit}:{path}" for _, commit, path in wanted])
    # the YAML reader, imported only with a branch to read (status stays cheap)
    from stepkit.planrepo.document import parse_document

    found = []
    for (branch, commit, _), text in zip(wanted, texts, strict=True):
        meta, _ = parse_document(text.decode("utf-8", "replace")) if text is not None else ({}, "")
        if str(meta.get("status", "")).strip() == "complete":
            number = meta.get("step") or int(
                branch.removeprefix(BRANCH_PREFIX).split("-", 1)[0] or 0
            )
            found.append(
                {
                    "branch": branch,
                    "step": number,
                    "title": meta.get("title"),
                    "status": "complete",
                    "commit": commit,
                }
            )
    return found


def _has_stepkit_refs(common: Path) -> bool:
    """Whether the repository has a ``stepkit/`` branch, loose or packed."""
    loose = common / "refs" / "heads" / BRANCH_PREFIX.rstrip("/")
    if loose.is_dir() and any(path.is_file() for path in loose.rglob("*")):
        return True
    try:
        with open(common / "packed-refs", "rb") as packed:
            return any(f" refs/heads/{BRANCH_PREFIX}".encode() in line for line in packed)
    except OSError:
        return False
