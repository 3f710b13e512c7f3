"""How a ``--worktree`` run ends: at STEP_COMPLETE the step becomes one
commit on its branch (everything not ignored: its code, plan status,
handoff, NOTES.md facts, Edge-cases annotations), merged when ``--merge``
asked and it is safe (:mod:`stepkit.worktrees.merge`); the work tree is
removed only when its branch then holds everything.  Any other ending
(paused, failed, blocked, rejected) keeps the work tree as it is.

Completion is a transaction kept in the run's checkpoint: the engine saves
the ending with ``finishing: commit`` in one write, this module moves it to
``merge`` (when asked) once the commit exists and clears it once the merge
is done, each under held signals.  A stop (a signal, a kill, a crash) in
between leaves the run owing that much; ``stepkit resume`` finishes it, and
finishing twice is harmless: a branch already past its base is not
committed again.  The work tree (where the run store is) is removed only
after that.

The run's ``--json`` gains ``branch``, ``worktree`` (and ``commit``,
``worktree_removed``, ``merged``, ``merge_note``); its text output names
the merge command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from stepkit.engine.interrupts import RunInterrupted, held_signals, signal_number
from stepkit.engine.runstore import RunDir
from stepkit.records import RunResult
from stepkit.text import commit_paragraphs
from stepkit.workspace.scope import git
from stepkit.workspace.worktree_record import COMMITS_AT, SETTING, WorktreeRecord
from stepkit.worktrees.identity import commit_identity
from stepkit.worktrees.merge import merge_branch

#: The sentinel of the one ending that commits.
COMPLETE = COMMITS_AT


def finish_run(
    result: RunResult,
    settings: dict[str, Any],
    merge: bool | None = None,
    run: RunDir | None = None,
) -> RunResult:
    """``result`` of a run in a stepkit work tree, finished as this module
    says (in place; returns it); any other run's result as it is.

    :param merge: overrides the ``--merge`` the run was started with.
    :param run: the run, whose checkpoint records what is still owed.
    :raises RunInterrupted: a stop signal before the commit or the merge was
        made; the checkpoint still owes it (``stepkit resume`` finishes it)."""
    record = WorktreeRecord.from_mapping(settings.get(SETTING))
    if record is None:
        return result
    report: dict[str, Any] = {
        "branch": record.branch,
        "worktree": record.path,
        "commit": None,
        "worktree_removed": False,
        "merged": False,
        "merge_note": None,
    }
    lines = [""]
    if result.outcome == COMPLETE:
        try:
            lines += _complete(
                record,
                result.state,
                report,
                record.merge if merge is None else merge,
                _Owing(run),
            )
        except KeyboardInterrupt as exc:
            raise RunInterrupted(result.run_id, record.origin, signal_number(exc)) from None
    else:
        lines.append(
            f"The work tree is kept with everything in it: {record.path} (branch {record.branch})."
        )
    result.report.update(report)
    result.output = result.output.rstrip("\n") + "\n" + "\n".join(lines)
    return result


class _Owing:
    """What the run's checkpoint says is still owed (``finishing``)."""

    def __init__(self, run: RunDir | None) -> None:
        self.run = run

    def now(self, what: Literal["commit", "merge"] | None) -> None:
        """Record that ``what`` (``merge``, or None: nothing) is owed now."""
        if self.run is None:
            return
        with held_signals():
            checkpoint = self.run.load()
            if checkpoint.finishing != what:
                checkpoint.finishing = what
                self.run.save(checkpoint)


def _complete(
    record: WorktreeRecord,
    state: dict[str, Any],
    report: dict[str, Any],
    merge: bool,
    owing: _Owing,
) -> list[str]:
    path = Path(record.path)
    commit, why = committed(record), ""
    if commit is None:
        commit, why = commit_step(path, commit_message(state))
    if commit is None:
        return [
            (
                f"The step could not be committed on {record.branch} ({why}); "
                f"the work tree is kept with everything in it: {record.path}."
            )
        ]
    report["commit"] = commit
    owing.now("merge" if merge else None)
    lines = [f"Committed on branch {record.branch} ({commit[:12]})."]
    if merge:
        report["merged"], report["merge_note"] = merge_branch(record)
        owing.now(None)
    # the run store is in the work tree's git dir: it goes only once nothing is owed
    if _leftovers(path):
        lines.append(
            f"The work tree is kept: it holds changes the commit does not ({record.path})."
        )
    else:
        report["worktree_removed"] = remove_worktree(record)
        if not report["worktree_removed"]:
            lines.append(f"The work tree could not be removed: {record.path}.")
    if merge:
        lines.append(report["merge_note"][0].upper() + report["merge_note"][1:] + ".")
        if report["merged"]:
            if report["worktree_removed"]:
                git.call(["branch", "-d", record.branch], Path(record.origin_top))
            return lines
    lines.append(f"Merge it with: git merge {record.branch}")
    return lines


def committed(record: WorktreeRecord) -> str | None:
    """The step's commit when its branch already holds everything (past its
    base, nothing left to commit: a finish stopped after the commit), else None."""
    head = git.head(Path(record.path))
    if head is None or head == record.base or _leftovers(Path(record.path)):
        return None
    return head


def commit_message(state: dict[str, Any]) -> str:
    """The step's commit message (:func:`~stepkit.text.commit_paragraphs`)."""
    paragraphs = commit_paragraphs(
        str(state.get("step_summary") or ""), state.get("step"), state.get("title") or ""
    )
    return "\n\n".join(paragraphs) + "\n"


def commit_step(worktree: Path, message: str) -> tuple[str | None, str]:
    """Commit everything the work tree holds that git does not ignore, as
    one commit; (its id, '') or (None, why not)."""
    code, _, err = git.call(["add", "-A"], worktree)
    if code != 0:
        return None, git.last_error(err)
    code, _, err = git.call(
        ["commit", "-q", "--allow-empty", "-m", message], worktree, env=commit_identity(worktree)
    )
    if code != 0:
        return None, git.last_error(err)
    return git.head(worktree), ""


def remove_worktree(record: WorktreeRecord) -> bool:
    """``git worktree remove`` (which refuses a work tree holding changes); True when it is gone."""
    code, _, _ = git.call(["worktree", "remove", record.path], Path(record.origin_top))
    return code == 0 and not Path(record.path).exists()


def _leftovers(worktree: Path) -> bool:
    """Anything git does not ignore that HEAD does not hold (or git cannot tell)."""
    out = git.run(["status", "--porcelain", "-z", "-uall", "--ignore-submodules=none"], worktree)
    return out is None or bool(out)
