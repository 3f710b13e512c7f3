"""Runs of one ``--parallel`` that finish together merge one after the
other: the second waits for the first's merge instead of being refused by
its lock (it was left unmerged, "another stepkit command is live")."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from stepkit.workspace.store import GIT_SUBDIR
from stepkit.workspace.worktree_record import WorktreeRecord
from stepkit.worktrees.merge import merge_branch
from tests.support.gitrepo import commit, git, init_repo
from tests.support.waiting import wait_until


def blocked_on(path: Path) -> bool:
    """Some process waits for the flock of ``path`` (a ``->`` line of /proc/locks)."""
    inode = os.stat(path).st_ino
    return any(
        line.split()[1] == "->" and line.split()[6].endswith(f":{inode}")
        for line in Path("/proc/locks").read_text().splitlines()
        if "->" in line
    )


def test_a_merge_waits_for_another_merge_into_the_same_repository(tmp_path):
    repo = init_repo(tmp_path / "repo", {"a.txt": "a\n"}, "base")
    git(repo, "checkout", "-qb", "stepkit/01-one")
    commit(repo, {"one.txt": "one\n"}, "step 1")
    git(repo, "checkout", "-q", "main")
    record = WorktreeRecord(
        path=str(tmp_path / "wt"),
        project=str(tmp_path / "wt"),
        origin=str(repo),
        origin_top=str(repo),
        branch="stepkit/01-one",
        base="",
        step=1,
        plans="plans",
    )
    lock = repo / ".git" / GIT_SUBDIR / "merge.lock"
    lock.parent.mkdir(parents=True)
    held = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)  # another run of the invocation is merging
    answer: list[tuple[bool, str]] = []
    merging = threading.Thread(target=lambda: answer.append(merge_branch(record)))
    merging.start()
    try:
        wait_until(
            lambda: blocked_on(lock) or bool(answer), "the merge waiting for the other merge"
        )
        assert not answer  # not refused while the other merge goes on
    finally:
        os.close(held)
    merging.join()
    assert answer == [(True, "merged stepkit/01-one into main")]
    assert (repo / "one.txt").read_text() == "one\n"
