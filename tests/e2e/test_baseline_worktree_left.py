"""A ``stepkit verify --baseline REF`` killed with -9 while its baseline ran
leaves a temporary ``git worktree`` registered in the user's repository; the
next command that uses baselines removes it and git's record of it.

Real CLI, a real git repo: the old tree's tests block on a named pipe while
a marker file says so, so the test waits on the baseline's work tree
appearing in ``git worktree list``, never on time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from tests.support.e2e import CHECK, PY, Project, make_project

#: the old tree's tests: while the marker exists they block reading a pipe
BLOCKING_CHECK = """import os, pathlib
state = pathlib.Path(os.environ["E2E_STATE_DIR"])
if (state / "block").exists():
    (state / "pipe").read_text()
print("2 passed in 0.01s")
"""


def worktrees(project: Project) -> list[str]:
    return [
        line.split(" ", 1)[1]
        for line in project.git("worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]


def old_tree_blocks(tmp_path: Path) -> Project:
    """HEAD~1's tests block while ``block`` exists; HEAD's fail (calc has no mul)."""
    project = make_project(tmp_path)
    identity = ["-c", "user.name=t", "-c", "user.email=t@t"]
    (project.root / "check.py").write_text(BLOCKING_CHECK)
    project.git(*identity, "commit", "-qam", "old tests")
    (project.root / "check.py").write_text(CHECK)
    project.git(*identity, "commit", "-qam", "real tests")
    os.mkfifo(project.state_dir / "pipe")
    (project.state_dir / "block").touch()
    return project


def release_pipe(project: Project) -> None:
    """Let an orphaned old-tree test go: open the pipe's write end, if it has a reader."""
    with contextlib.suppress(OSError):
        os.close(os.open(project.state_dir / "pipe", os.O_WRONLY | os.O_NONBLOCK))


def test_a_killed_baselines_worktree_is_removed_at_the_next_verify(tmp_path: Path) -> None:
    project = old_tree_blocks(tmp_path)
    main = worktrees(project)
    verify = subprocess.Popen(
        [PY, "-m", "stepkit", "verify", "--baseline", "HEAD~1", "--json"],
        cwd=project.root,
        env=project.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120  # a guard against a hang, not the synchronisation
        while len(worktrees(project)) == len(main):
            assert verify.poll() is None, verify.stderr.read() if verify.stderr else ""
            assert time.monotonic() < deadline, "the baseline's work tree never appeared"
            time.sleep(0.05)
        verify.send_signal(signal.SIGKILL)
        verify.wait()
    finally:
        if verify.poll() is None:
            verify.kill()
            verify.wait()
    left = [path for path in worktrees(project) if path not in main]
    assert left, "the killed verify's work tree is no longer registered"
    (project.state_dir / "block").unlink()
    release_pipe(project)

    again = project.stepkit("verify", "--baseline", "HEAD~1")
    assert again.code == 1 and again.data["gates"], (again.stdout, again.stderr)
    assert worktrees(project) == main
    assert not any(Path(path).exists() for path in left)
    assert not Path(left[0]).parent.exists()  # the temporary directory it was in is gone too


def test_a_live_baselines_worktree_is_left_alone(tmp_path: Path) -> None:
    """Another verify whose baseline is running now keeps its work tree."""
    project = old_tree_blocks(tmp_path)
    main = worktrees(project)
    first = subprocess.Popen(
        [PY, "-m", "stepkit", "verify", "--baseline", "HEAD~1", "--json"],
        cwd=project.root,
        env=project.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(worktrees(project)) == len(main):
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        running = [path for path in worktrees(project) if path not in main]
        # the project is busy (the first verify holds its lock): this one refuses, having pruned nothing live
        second = project.stepkit("verify", "--baseline", "HEAD~1")
        assert second.code != 0
        assert [path for path in worktrees(project) if path not in main] == running
        assert Path(running[0]).is_dir()
    finally:
        release_pipe(project)
        (project.state_dir / "block").unlink(missing_ok=True)
        first.wait(timeout=120)
    assert worktrees(project) == main
