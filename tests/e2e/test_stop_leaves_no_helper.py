"""A stopped stepkit leaves none of its own helpers running.

stepkit runs its helpers (git, the probes) as children in its own session;
a stop signal that arrives while one is waited for kills it
(``subprocess.run``).  One that arrives while the helper is being started,
after the fork and before ``Popen`` returns, left it running unowned: on a
loaded CI machine a ``git merge`` held by a test went on after the stopped
``stepkit resume`` had exited, and merged a step the run said was not merged.
Whatever the race, the interrupted exit stops what is left of them.

A command that answers may leave one too: a probe asked ahead (a Python on
the PATH asked for its site directories while a run sets up) is still
running when the command exits with a usage error; a Python that hangs
would run on unowned.  Every exit stops what is left of the helpers.

The race is made certain here: the real CLI in a process of its own, its
``subprocess.Popen._execute_child`` patched to signal the process once the
first ``git`` has forked (SIGTERM, SIGINT or SIGHUP), so the signal is taken inside ``Popen()``; the
``git`` on the PATH records nothing and sleeps, as a held merge does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

RACING = """
import os, signal, subprocess, sys
real = subprocess.Popen._execute_child
sent = []
def racing(self, args, *rest, **kwargs):
    real(self, args, *rest, **kwargs)
    if not sent and os.path.basename(str(args[0])) == "git":
        sent.append(self.pid)
        with open(os.environ["HELPER_PID"], "w") as out:
            out.write(str(self.pid))
        os.kill(os.getpid(), int(os.environ["STOP_WITH"]))  # taken at the next bytecode: inside Popen()
subprocess.Popen._execute_child = racing
from stepkit.cli import entry
sys.argv = ["stepkit", *sys.argv[1:]]
entry()
"""


def running(pid: int) -> bool:
    """The process exists and is not a zombie (the container's init may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stepkit(
    script: str, args: list[str], tmp_path: Path, bin_dir: Path, **variables: str
) -> subprocess.CompletedProcess[str]:
    """The real CLI run by ``script`` with ``args``, ``bin_dir`` first on the PATH."""
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        **variables,
    }
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name
)
def test_a_stop_while_a_git_starts_leaves_it_not_running(tmp_path, sig):
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "stepkit.toml").write_text('[commands]\ntests = "true"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = bin_dir / "git"
    git.write_text("#!/bin/sh\nexec sleep 60\n")
    git.chmod(0o755)
    pid_file = tmp_path / "helper.pid"
    done = stepkit(
        RACING,
        ["verify", "--project-dir", str(project)],
        tmp_path,
        bin_dir,
        HELPER_PID=str(pid_file),
        STOP_WITH=str(int(sig)),
    )
    helper = int(pid_file.read_text())
    try:
        assert done.returncode == 128 + sig, done.stderr
        assert f"interrupted ({sig.name})" in done.stderr
        assert not running(helper), f"git (pid {helper}) outlived the stopped stepkit"
    finally:
        if running(helper):
            os.kill(helper, signal.SIGKILL)


PROBING = """
import os, subprocess, sys
real = subprocess.Popen._execute_child
def recording(self, args, *rest, **kwargs):
    real(self, args, *rest, **kwargs)
    if str(args[0]).startswith(os.environ["FAKE_BIN"]):
        with open(os.environ["HELPER_PID"], "a") as out:
            out.write(f"{self.pid}\\n")
subprocess.Popen._execute_child = recording
from stepkit.cli import entry
sys.argv = ["stepkit", *sys.argv[1:]]
entry()
"""


INCOMPLETE_STEP = '---\nid: "01"\ntitle: half a step\n---\n# half a step\n'


@pytest.mark.parametrize(
    ("plans", "refusal"),
    [(False, "no plan repo"), (True, "is incomplete")],
    ids=["no plan repo", "an incomplete step"],
)
def test_a_command_that_answers_leaves_no_probe_running(tmp_path, plans, refusal):
    """``stepkit run`` asks the Pythons on the PATH for their site directories
    ahead, while it sets up; one that hangs is still running when the run
    is refused (exit 2: no plan repo, or a step with its sections missing,
    found later in the set-up), and is stopped with it."""
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    if plans:
        (project / "plans" / "steps").mkdir(parents=True)
        (project / "plans" / "steps" / "01-half.md").write_text(INCOMPLETE_STEP)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("python3", "python"):
        (bin_dir / name).write_text("#!/bin/sh\nexec sleep 60\n")
        (bin_dir / name).chmod(0o755)
    pid_file = tmp_path / "helpers.pid"
    done = stepkit(
        PROBING,
        ["run", "01", "--project-dir", str(project)],
        tmp_path,
        bin_dir,
        FAKE_BIN=str(bin_dir),
        HELPER_PID=str(pid_file),
    )
    # written by stepkit itself as each probe forked: the probe was under way before the exit
    probes = [int(line) for line in pid_file.read_text().split()]
    try:
        assert done.returncode == 2, done.stderr
        assert refusal in done.stderr
        assert probes
        left = [pid for pid in probes if running(pid)]
        assert not left, f"probes {left} outlived the stepkit that started them"
    finally:
        for pid in probes:
            if running(pid):
                os.kill(pid, signal.SIGKILL)
