"""What ``stepkit status`` shows of ``--worktree`` runs stays cheap: no git
process without a ``stepkit/`` branch, no pydantic with one, and the refs
are found loose or packed.  Real git repositories and real ``git worktree``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit.workspace.worktree_record import WorktreeRecord, record_of, write_record
from stepkit.worktrees import listing
from stepkit.worktrees.listing import worktree_status
from tests.support.gitrepo import commit, git, init_repo

STEP = "---\nstep: 1\ntitle: Add a\nstatus: {status}\n---\n\n## Objective\nA.\n"


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "plans" / "steps").mkdir(parents=True)
    (root / "plans" / "steps" / "01-a.md").write_text(STEP.format(status="pending"))
    init_repo(root)
    return root


def complete_on_branch(root: Path, branch: str) -> None:
    """``branch`` with step 1 complete, the user's HEAD and tree left where they are."""
    tree = root.parent / "side"
    git(root, "worktree", "add", "-q", "-b", branch, str(tree))
    (tree / "plans" / "steps" / "01-a.md").write_text(STEP.format(status="complete"))
    git(tree, "commit", "-qam", "step 1")
    git(root, "worktree", "remove", str(tree))


def test_no_stepkit_branch_starts_no_git_process(repo, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args}")

    git(repo, "branch", "feature")
    monkeypatch.setattr(listing.git, "_spawn", refuse)
    assert worktree_status(repo, repo / "plans") == {"worktree_runs": [], "unmerged_branches": []}


@pytest.mark.parametrize("packed", [False, True])
def test_a_complete_unmerged_branch_is_listed_loose_or_packed(repo, packed):
    complete_on_branch(repo, "stepkit/01-a")
    if packed:
        git(repo, "pack-refs", "--all")
        assert not (repo / ".git" / "refs" / "heads" / "stepkit" / "01-a").exists()
    [branch] = worktree_status(repo, repo / "plans")["unmerged_branches"]
    assert (branch["branch"], branch["step"], branch["title"], branch["status"]) == (
        "stepkit/01-a",
        1,
        "Add a",
        "complete",
    )
    git(repo, "merge", "-q", "stepkit/01-a")
    assert worktree_status(repo, repo / "plans")["unmerged_branches"] == []


def test_a_branch_whose_step_is_not_complete_there_is_not_listed(repo):
    git(repo, "branch", "stepkit/01-a")
    commit(repo, {"x": "x"}, "ahead")
    git(repo, "checkout", "-q", "stepkit/01-a")
    commit(repo, {"y": "y"}, "unmerged, step still pending")
    git(repo, "checkout", "-q", "-")
    assert worktree_status(repo, repo / "plans")["unmerged_branches"] == []


def test_a_recorded_worktree_without_runs_is_listed_and_status_loads_no_pydantic(repo, tmp_path):
    tree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "stepkit/01-a", str(tree))
    record = WorktreeRecord(
        path=str(tree),
        project=str(tree),
        origin=str(repo),
        origin_top=str(repo),
        branch="stepkit/01-a",
        base=git(repo, "rev-parse", "HEAD").strip(),
        step=1,
        plans="plans",
    )
    write_record(tree, record)
    assert record_of(tree) == record and record_of(repo) is None
    [entry] = worktree_status(repo, repo / "plans")["worktree_runs"]
    assert (entry["branch"], entry["state"], entry["run_id"]) == ("stepkit/01-a", "no run", None)

    script = (
        "import json, sys\nfrom stepkit.cli import main\ncode = main(['status', '--json'])\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'anthropic'})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report, loaded = done.stdout.strip().splitlines()
    assert json.loads(loaded) == []
    assert [r["branch"] for r in json.loads(report)["worktree_runs"]] == ["stepkit/01-a"]
