"""stepkit's own changes to the user's tree (its merges) are recorded sealed
and are not taken for a coder's; anything else between the same two looks is.

Real git repositories in tmp dirs.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from stepkit.workspace.scope import users_tree
from stepkit.workspace.worktree_record import WorktreeRecord
from stepkit.worktrees.merge import _only_the_merge, merge_branch
from tests.support.gitrepo import commit, git, init_repo


@pytest.fixture
def repo(tmp_path):
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git(root, "checkout", "-qb", "step")
    commit(root, {"b.txt": "b\n"}, "the step")
    git(root, "checkout", "-q", "main")
    return root


def test_a_recorded_merge_leads_from_one_look_to_the_other(repo):
    before = users_tree.look(repo)
    git(repo, "merge", "-q", "step")
    after = users_tree.look(repo)
    assert users_tree.changes(before, after) == [
        "b.txt (added)",
        "the index (changed)",
        "HEAD (changed)",
    ]
    assert not users_tree.own_change(repo, before, after)
    users_tree.record_own_change(repo, before, after)
    assert users_tree.own_change(repo, before, after)
    (repo / "a.txt").write_text("changed by someone else\n")
    assert not users_tree.own_change(repo, before, users_tree.look(repo))


def test_a_record_without_stepkits_seal_leads_nowhere(repo):
    before = users_tree.look(repo)
    (repo / "a.txt").write_text("a coder's change\n")
    after = users_tree.look(repo)
    records = repo / ".git" / "stepkit" / users_tree.OWN_CHANGES
    records.mkdir(parents=True)
    (records / "1-1.json").write_text(
        f'{{"before": "{users_tree.digest(before)}", "after": "{users_tree.digest(after)}"}}'
    )
    assert not users_tree.own_change(repo, before, after)


def test_only_a_merge_that_made_all_the_change_is_recorded(repo):
    before = users_tree.look(repo)
    git(repo, "merge", "-q", "step")
    assert _only_the_merge(repo, before, users_tree.look(repo), {"b.txt"})
    (repo / "a.txt").write_text("written while the merge ran\n")
    assert not _only_the_merge(repo, before, users_tree.look(repo), {"b.txt"})
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("not what the merge wrote\n")
    assert not _only_the_merge(repo, before, users_tree.look(repo), {"b.txt"})


def _waiting_for_the_lock(thread_id: int) -> bool:
    """The thread sleeps in the kernel on a file lock (its ``wchan``)."""
    try:
        return "lock" in Path(f"/proc/self/task/{thread_id}/wchan").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a thread's wchan")
def test_a_look_taken_while_a_merge_is_under_way_waits_for_its_record(repo, monkeypatch):
    """A sibling run's look that would fall between the merge's checkout and
    its record (the merged files there, no record yet) waits for the record,
    so it is never taken for a change the coder or a gate made."""
    before = users_tree.settled_look(repo)
    looked: list[users_tree.Look] = []
    watcher_id: list[int] = []
    started, done = threading.Event(), threading.Event()

    def watcher() -> None:
        watcher_id.append(threading.get_native_id())
        started.set()
        looked.append(users_tree.settled_look(repo))
        done.set()

    recorded = users_tree.record_own_change

    def record_once_the_watcher_looks(top, merge_before, merge_after):
        thread = threading.Thread(target=watcher)
        thread.start()
        started.wait()
        # the watcher's look now either ran through (nothing held it) or waits for the lock
        while not done.wait(0.001) and not _waiting_for_the_lock(watcher_id[0]):
            pass
        events.append("looked before the record" if looked else "record")
        recorded(top, merge_before, merge_after)
        threads.append(thread)

    events: list[str] = []
    threads: list[threading.Thread] = []
    monkeypatch.setattr(users_tree, "record_own_change", record_once_the_watcher_looks)
    record = WorktreeRecord(
        path=str(repo),
        project=str(repo),
        origin=str(repo),
        origin_top=str(repo),
        branch="step",
        base="",
        step=1,
        plans="plans",
    )
    merged, why = merge_branch(record)
    threads[0].join()
    assert merged, why
    assert events == ["record"]
    assert users_tree.changes(before, looked[0])  # the merge is in it ...
    assert users_tree.own_change(repo, before, looked[0])  # ... and recorded as stepkit's


def test_a_look_goes_on_where_the_merge_lock_cannot_be_made(repo):
    """Where stepkit's directory in the repository cannot be made (here a
    file stands in its place), a watched node's look goes on without the
    lock, and a merge, which cannot take it either, is refused."""
    (repo / ".git" / "stepkit").write_text("not a directory\n")
    assert users_tree.settled_look(repo) == users_tree.look(repo)
    with pytest.raises(OSError), users_tree.merging(repo):
        pass
