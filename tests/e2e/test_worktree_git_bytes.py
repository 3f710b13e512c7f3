"""Git's files are bytes: a byte that is not UTF-8 in what stepkit reads
from git (``.git/info/attributes``, ``.git/config``, a branch name) never
crashes a ``--worktree`` run, and is kept as it was.  And creating the work
tree is all or nothing: a failure after ``git worktree add`` leaves no
branch, work tree or record behind.  Real git repositories, the real CLI,
the scripted engine and coder.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stepkit.errors import UsageError
from stepkit.worktrees import create
from tests.support.e2e import Project, make_project

BRANCH = "stepkit/01-mul"
FOREIGN = b"*.bin -diff # caf\xe9\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, errors="surrogateescape"
    ).stdout


def leftovers(project: Project) -> tuple[list[str], list[str]]:
    """The stepkit branches and the linked work trees git has on record."""
    branches = git(project.root, "branch", "--list", "stepkit/*", "--format=%(refname)").split()
    listed = git(project.root, "worktree", "list", "--porcelain").splitlines()
    linked = [line for line in listed if line.startswith("worktree ")][1:]
    return branches, linked


def run_worktree(project: Project) -> None:
    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr + paused.stdout
    assert paused.data["branch"] == BRANCH
    assert (Path(paused.data["worktree"]) / "calc.py").is_file()


@pytest.mark.slow
def test_a_non_utf8_byte_in_info_attributes_is_kept_and_the_run_goes_on(tmp_path):
    project = make_project(tmp_path)
    attributes = project.root / ".git" / "info" / "attributes"
    attributes.parent.mkdir(parents=True, exist_ok=True)
    attributes.write_bytes(FOREIGN)

    run_worktree(project)
    kept = attributes.read_bytes()
    assert kept.startswith(FOREIGN) and b"merge=stepkit-plan" in kept


@pytest.mark.slow
def test_a_non_utf8_byte_in_the_git_config_and_a_branch_name_do_not_stop_a_run(tmp_path):
    project = make_project(tmp_path)
    with open(project.root / ".git" / "config", "ab") as config:
        config.write(b'[remote "caf\xe9"]\n\turl = /nowhere/caf\xe9\n')
    git(project.root, "branch", os.fsdecode(b"caf\xe9"))
    # a stepkit branch not merged, which status reads
    git(project.root, "branch", os.fsdecode(b"stepkit/09-caf\xe9"))

    run_worktree(project)
    status = project.stepkit("status", "--project-dir", str(project.root))
    assert status.code == 0, status.stderr + status.stdout


def test_a_failure_after_the_work_tree_is_made_leaves_nothing_behind(tmp_path, monkeypatch):
    project = make_project(tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C while the record is written

    with monkeypatch.context() as patched, pytest.raises(KeyboardInterrupt):
        patched.setattr(create, "write_record", interrupted)
        create.open_worktree(project.root, project.plans, "next", "")
    assert leftovers(project) == ([], [])

    # and the next run is not refused
    record = create.open_worktree(project.root, project.plans, "next", "")
    assert record.branch == BRANCH and Path(record.path).is_dir()
    with pytest.raises(UsageError, match="already exists"):
        create.open_worktree(project.root, project.plans, "next", "")
