"""How a ``--worktree`` run ends: at STEP_COMPLETE the step becomes one
commit on its branch (everything not ignored: its code, plan status,
handoff, NOTES.md facts, Edge-cases annotations), merged when ``--merge``
asked and it is safe (:mod:`stepkit.worktrees.merge`); the work tree is
removed only when its branch then holds everything.  Any other ending
(paused, failed, blocked, rejected) keeps the work tree as it is.

The run's ``--json`` gains ``branch``, ``worktree`` (and ``commit``,
``worktree_removed``, ``merged``, ``merge_note``); its text output names
the merge command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.records import RunResult
from stepkit.text import commit_paragraphs
from stepkit.workspace.scope import git
from stepkit.workspace.worktree_record import SETTING, WorktreeRecord
from stepkit.worktrees.identity import commit_identity
from stepkit.worktrees.merge import merge_branch

#: The sentinel of the one ending that commits.
COMPLETE = "STEP_COMPLETE"


def finish_run(result: RunResult, settings: dict[str, Any], merge: bool | None = None) -> RunResult:
    """``result`` of a run in a stepkit work tree, finished as this module
    says (in place; returns it); any other run's result as it is.

    :param merge: overrides the ``--merge`` the run was started with."""
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
        lines += _complete(record, result.state, report, record.merge if merge is None else merge)
    else:
        lines.append(
            f"The work tree is kept with everything in it: {record.path} (branch {record.branch})."
        )
    result.report.update(report)
    result.output = result.output.rstrip("\n") + "\n" + "\n".join(lines)
    return result


def _complete(
    record: WorktreeRecord, state: dict[str, Any], report: dict[str, Any], merge: bool
) -> list[str]:
    path = Path(record.path)
    commit, why = commit_step(path, commit_message(state))
    if commit is None:
        return [
            (
                f"The step could not be committed on {record.branch} ({why}); "
                f"the work tree is kept with everything in it: {record.path}."
            )
        ]
    report["commit"] = commit
    lines = [f"Committed on branch {record.branch} ({commit[:12]})."]
    if _leftovers(path):
        lines.append(
            f"The work tree is kept: it holds changes the commit does not ({record.path})."
        )
    else:
        report["worktree_removed"] = remove_worktree(record)
        if not report["worktree_removed"]:
            lines.append(f"The work tree could not be removed: {record.path}.")
    if merge:
        report["merged"], report["merge_note"] = merge_branch(record)
        lines.append(report["merge_note"][0].upper() + report["merge_note"][1:] + ".")
        if report["merged"]:
            if report["worktree_removed"]:
                git.call(["branch", "-d", record.branch], Path(record.origin_top))
            return lines
    lines.append(f"Merge it with: git merge {record.branch}")
    return lines


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
