"""stepkit's own changes to the user's tree (its merges) are recorded sealed
and are not taken for a coder's; anything else between the same two looks is.

Real git repositories in tmp dirs.
"""

from __future__ import annotations

import pytest

from stepkit.workspace.scope import users_tree
from stepkit.worktrees.merge import _only_the_merge
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
