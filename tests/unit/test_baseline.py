"""The baseline tree rebuilt outside the user's tree, its cache, and how
failures are named and split into new and pre-existing."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.workspace.baseline import (
    BaselineUnavailable,
    baseline_record,
    checked_out,
    ref_tree,
    snapshot_tree,
    split_failures,
)
from stepkit.workspace.lintkeys import lint_keys
from stepkit.workspace.scope import take_snapshot
from tests.support.gitrepo import git as _git
from tests.support.gitrepo import init_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(
        tmp_path / "repo",
        {"a.txt": "committed\n", "gone.txt": "committed, deleted before the step\n"},
    )


def test_the_start_tree_is_the_commit_plus_the_uncommitted_files_and_the_user_tree_is_untouched(
    repo,
):
    (repo / "a.txt").write_text("edited before the step\n")
    (repo / "new.txt").write_text("untracked before the step\n")
    (repo / "gone.txt").unlink()
    (repo / "node_modules").mkdir()  # an ignored dependency dir is linked in
    snapshot = take_snapshot(repo)
    (repo / "a.txt").write_text("the step's edit\n")  # what the coder did afterwards
    status_before = _git(repo, "status", "--porcelain")
    with checked_out(snapshot_tree(snapshot)) as where:
        assert where != repo
        assert (where / "a.txt").read_text() == "edited before the step\n"
        assert (where / "new.txt").read_text() == "untracked before the step\n"
        assert not (where / "gone.txt").exists()
        assert (where / "node_modules").resolve() == (repo / "node_modules").resolve()
    assert not where.exists()
    assert _git(repo, "worktree", "list").count("\n") == 1  # git's record of it is gone too
    assert _git(repo, "status", "--porcelain") == status_before
    assert (repo / "a.txt").read_text() == "the step's edit\n"


def test_a_ref_tree_and_an_unknown_ref(repo):
    from stepkit.errors import UsageError

    (repo / "a.txt").write_text("working tree\n")
    with checked_out(ref_tree(repo, "HEAD")) as where:
        assert (where / "a.txt").read_text() == "committed\n"
    with pytest.raises(UsageError, match="no such commit"):
        ref_tree(repo, "no-such-branch")


def test_bytes_that_were_not_kept_mean_no_baseline(repo):
    (repo / "big.bin").write_bytes(b"\0" * 100)  # binary: the snapshot keeps only its id
    snapshot = take_snapshot(repo)
    with pytest.raises(BaselineUnavailable, match="big.bin"), checked_out(snapshot_tree(snapshot)):
        pass


def test_a_baseline_runs_once_per_tree_and_is_cached(repo):
    calls = []

    def run(where: Path, log_dir: Path):
        calls.append(where)
        return "fail", "1 failed", None, "", None

    tree = ref_tree(repo, "HEAD")
    first = baseline_record(repo, tree, "lint", "lint .", run)
    again = baseline_record(repo, tree, "lint", "lint .", run)
    assert len(calls) == 1 and not first.cached and again.cached
    baseline_record(repo, tree, "lint", "other lint", run)
    assert len(calls) == 2  # another command is another baseline


def test_lint_keys_ignore_line_numbers_and_the_tree_root():
    out = (
        "/tmp/x/tree/src/a.py:12:5: F401 `os` imported but unused\n"
        "src/b.ts(3,7): error TS2322: Type 'string' is not assignable\n"
        "error[E0308]: mismatched types\n  --> src/main.rs:4:9\n"
        "/tmp/x/tree/src/c.js\n  3:5  error  'x' is unused  no-unused-vars\n"
        "Found 3 errors.\n"
    )
    assert lint_keys(out, [Path("/tmp/x/tree")]) == [
        "src/a.py: F401 `os` imported but unused",
        "src/b.ts: TS2322 Type 'string' is not assignable",
        "src/main.rs: E0308 mismatched types",
        "src/c.js: no-unused-vars 'x' is unused",
    ]
    moved = "src/a.py:40:1: F401 `os` imported but unused\n"
    assert lint_keys(moved) == ["src/a.py: F401 `os` imported but unused"]


def test_split_failures():
    assert split_failures(["a", "b"], ["b", "c"]) == (["a"], ["b"])
    assert split_failures(["a"], None) == (["a"], [])
