"""Completion of a ``--worktree`` run is a transaction: a real stop signal
while the approved step is being committed (or merged) strands nothing.

git is made to wait at the one call the test stops the run in: a ``git``
on the run's PATH that, for that subcommand, says so in a file and blocks
on a FIFO the test holds (stepkit disables hooks, so no hook could do it).
The signal comes while the commit (or merge) is not made; ``stepkit
status`` then names the command that finishes the step and never a
destructive one, and ``stepkit resume`` finishes it: the commit on the
branch, the plan complete, exit 0.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.e2e import GOOD_MUL, PY
from tests.support.waiting import SAFETY_S, wait_until

# whole-step runs: outside the default suite (tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.project(files={".gitignore": "__pycache__/\n"})]

BRANCH = "stepkit/01-mul"
WAITING_GIT = """#!/bin/sh
# git, except that the subcommand $BLOCK_GIT waits for the test first (after it ran: $BLOCK_AFTER)
sub=""
skip=0
for arg in "$@"; do
    if [ "$skip" = 1 ]; then skip=0; continue; fi
    case "$arg" in
        -c) skip=1 ;;
        -*) ;;
        *) sub="$arg"; break ;;
    esac
done
if [ "$sub" = "$BLOCK_GIT" ]; then
    code=0
    if [ -n "$BLOCK_AFTER" ]; then REAL_GIT "$@"; code=$?; fi
    : > "$BLOCK_DIR/reached"
    read _ < "$BLOCK_DIR/go"
    if [ -n "$BLOCK_AFTER" ]; then exit "$code"; fi
fi
exec REAL_GIT "$@"
"""


def waiting_git(project, subcommand: str, after: bool = False) -> dict[str, str]:
    """The run's environment with a ``git`` that waits before ``subcommand``
    (``after``: once it has run, before it exits)."""
    bin_dir = project.state_dir / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(WAITING_GIT.replace("REAL_GIT", shutil.which("git")))
    wrapper.chmod(0o755)
    os.mkfifo(project.state_dir / "go")
    env = project.env(
        BLOCK_GIT=subcommand, BLOCK_DIR=str(project.state_dir), BLOCK_AFTER="1" if after else ""
    )
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}


def release(project) -> None:
    """Let a git still waiting on the FIFO go on (none may be)."""
    try:
        fd = os.open(project.state_dir / "go", os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        assert exc.errno == errno.ENXIO  # nobody waits: the run's git was stopped with it
        return
    os.close(fd)


def approve_and_stop(
    project, subcommand: str, sig: int, after: bool = False
) -> subprocess.CompletedProcess:
    """Approve the paused step with ``git subcommand`` held, stop the resume with ``sig`` there."""
    env = waiting_git(project, subcommand, after)
    approving = subprocess.Popen(
        [PY, "-m", "stepkit", "resume", "--project-dir", str(project.root), "--answer", "approve"],
        cwd=project.root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: (project.state_dir / "reached").exists(), f"git {subcommand}", approving)
        approving.send_signal(sig)
        out, err = approving.communicate(timeout=SAFETY_S)
    finally:
        if approving.poll() is None:
            approving.kill()
            approving.wait()
        release(project)
    return subprocess.CompletedProcess(approving.args, approving.returncode, out, err)


def assert_status_names_resume_and_nothing_destructive(project, run_id: str) -> None:
    text = project.stepkit("status", "--project-dir", str(project.root), json_out=False)
    assert text.code == 0, text.stderr
    assert "--force" not in text.stdout and "branch -D" not in text.stdout, text.stdout
    assert f"stepkit resume {run_id}" in text.stdout, text.stdout
    [entry] = project.stepkit("status", "--project-dir", str(project.root)).data["worktree_runs"]
    assert entry["run_id"] == run_id and entry["outcome"] == "STEP_COMPLETE", entry


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_during_the_commit_is_finished_by_resume(project, sig):
    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr + paused.stdout
    run_id, worktree = paused.data["run_id"], Path(paused.data["worktree"])
    base = project.git("rev-parse", "HEAD").strip()

    stopped = approve_and_stop(project, "commit", sig)

    assert stopped.returncode == 128 + sig, stopped.stderr
    assert f"stepkit resume {run_id}" in stopped.stderr
    assert project.git("rev-parse", BRANCH).strip() == base  # no commit yet
    assert (worktree / "calc.py").read_text() == GOOD_MUL  # the approved work is still there
    assert_status_names_resume_and_nothing_destructive(project, run_id)
    again = project.run("--worktree")  # the next run of the step names what finishes it
    assert again.code == 2 and f"finish it with: stepkit resume {run_id}" in again.stderr
    for plain in (project.run(), project.run("--rerun")):  # never redone in the user's tree
        assert plain.code == 2 and f"finish it with: stepkit resume {run_id}" in plain.stderr
    assert (project.root / "calc.py").read_text() != GOOD_MUL

    done = project.resume()

    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
    assert project.git("rev-list", "--count", f"{base}..{BRANCH}").strip() == "1"
    assert project.git("show", f"{BRANCH}:calc.py") == GOOD_MUL
    assert "status: complete" in project.git("show", f"{BRANCH}:plans/steps/01-mul.md")
    assert done.data["commit"] == project.git("rev-parse", BRANCH).strip()
    assert "Merge it with: git merge stepkit/01-mul" in done.output
    assert not worktree.exists()
    again = project.resume()
    assert again.code == 2, again.stderr  # finished: nothing left to resume


def test_a_stop_during_the_merge_is_finished_by_resume(project):
    """A variant: ``--merge``, and SIGINT between the commit and the merge."""
    paused = project.run("--worktree", "--merge")
    assert paused.code == 5, paused.stderr + paused.stdout
    run_id = paused.data["run_id"]
    base = project.git("rev-parse", "HEAD").strip()

    stopped = approve_and_stop(project, "merge", signal.SIGINT)

    assert stopped.returncode == 130, stopped.stderr
    assert project.git("rev-list", "--count", f"{base}..{BRANCH}").strip() == "1"  # committed
    assert project.git("rev-parse", "HEAD").strip() == base  # not merged
    assert project.plan_status(1) == "pending"
    assert_status_names_resume_and_nothing_destructive(project, run_id)

    done = project.resume()

    assert done.code == 0 and done.data["merged"] is True, done.stderr + done.stdout
    assert project.git("rev-list", "--count", f"{base}..HEAD").strip() == "1"  # the one commit
    assert (project.root / "calc.py").read_text() == GOOD_MUL
    assert project.plan_status(1) == "complete"
    assert project.git("branch", "--list", BRANCH) == ""  # merged, its work tree gone: deleted


def test_a_kill_after_the_commit_before_the_checkpoint_knows_it_commits_once(project):
    """A variant: SIGKILL (nothing of stepkit runs) once git made the commit,
    before the checkpoint said so; resume finds the commit and makes no other."""
    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr + paused.stdout
    run_id, worktree = paused.data["run_id"], Path(paused.data["worktree"])
    base = project.git("rev-parse", "HEAD").strip()

    stopped = approve_and_stop(project, "commit", signal.SIGKILL, after=True)

    assert stopped.returncode == -signal.SIGKILL
    assert project.git("rev-list", "--count", f"{base}..{BRANCH}").strip() == "1"
    assert_status_names_resume_and_nothing_destructive(project, run_id)

    done = project.resume()

    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
    assert project.git("rev-list", "--count", f"{base}..{BRANCH}").strip() == "1"
    assert done.data["commit"] == project.git("rev-parse", BRANCH).strip()
    assert project.git("show", f"{BRANCH}:calc.py") == GOOD_MUL
    assert not worktree.exists()
