"""Crash-test helpers: a project-local plugin that SIGKILLs the run at a node
boundary, a driver that resumes a killed run to its end, and a snapshot of
the project's files with the run-specific parts of the text normalised.

The killer is a real ``stepconf.py`` in the test project.  It kills the
process once: it creates its marker file before the kill, so the resumed
process (same environment) does not kill itself again.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

from stepkit.workspace.store import store_dir
from tests.support.e2e import PY, Project, Result, command_coder, sh
from tests.support.waiting import SAFETY_S, wait_until

KILLER = """import os
import pathlib
import signal

import stepkit


def _maybe_kill(node, phase):
    if node != os.environ.get("E2E_KILL_AT") or phase != os.environ.get("E2E_KILL_PHASE", "finished"):
        return
    marker = pathlib.Path(os.environ["E2E_STATE_DIR"]) / "killed"
    if marker.exists():
        return
    marker.write_text(f"{node} {phase}")
    os.kill(os.getpid(), signal.SIGKILL)


@stepkit.hookimpl
def stepkit_node_started(run_id, node, kind, state):
    _maybe_kill(node, "started")


@stepkit.hookimpl
def stepkit_node_finished(run_id, node, route, duration_s, state):
    _maybe_kill(node, "finished")
"""

KILLED = -signal.SIGKILL
#: Checkpoint fields that must equal an uninterrupted run's.
ROUTE_FIELDS = ("path", "edges", "visits", "outcome", "exit_code")
SKIP_DIRS = {".git", ".stepkit", "__pycache__"}
RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{4,}")
DURATION = re.compile(r"\d+(\.\d+)? ?s\b")
LOG_PATH = re.compile(r"(full log: )(?:<run store>/)?\S+")
#: the digest closing stepkit's Evidence (it covers the paths and durations above)
EVIDENCE_DIGEST = re.compile(r"(stepkit-evidence sha256:)[0-9a-f]{64}")


def install_killer(project: Project) -> None:
    """Write the killing ``stepconf.py`` into the project (committed, so the
    tree the run starts from is clean)."""
    (project.root / "stepconf.py").write_text(KILLER)
    project.git("add", "stepconf.py")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "killer plugin")


def kill_env(project: Project, node: str | None, phase: str = "finished") -> dict[str, str]:
    """The environment of every command of a crash test: kill once at
    ``node``'s ``phase`` ("started" or "finished")."""
    if node is None:
        return project.env()
    return project.env(E2E_KILL_AT=node, E2E_KILL_PHASE=phase)


def was_killed(project: Project) -> str | None:
    """``"<node> <phase>"`` where the killer struck, or None."""
    marker = project.state_dir / "killed"
    return marker.read_text() if marker.exists() else None


def drive(
    project: Project, env: dict[str, str], first: Result, approve: bool = True
) -> tuple[Result, list[int]]:
    """Resume ``first`` until it ends: a killed run is resumed as it is; a
    run paused at the final gate is answered ``approve`` (when ``approve``).

    :return: the last result and the exit codes seen on the way.
    """
    result, codes = first, [first.code]
    for _ in range(6):
        if result.code == KILLED:
            result = project.resume(env=env)
        elif approve and result.code == 5 and result.data["pending"]["node"] == "gate_user_review":
            result = project.resume("approve", env=env)
        else:
            return result, codes
        codes.append(result.code)
    raise AssertionError(f"the run did not end: exit codes {codes}")


def checkpoint(project: Project, run_id: str) -> dict[str, Any]:
    """The run's final checkpoint."""
    return json.loads((store_dir(project.root) / "runs" / run_id / "state.json").read_text())


def route_of(project: Project, run_id: str) -> dict[str, Any]:
    """What must not depend on a crash: the nodes run, the edges taken, the
    visit counts and the outcome."""
    cp = checkpoint(project, run_id)
    return {key: cp[key] for key in ROUTE_FIELDS}


def _without_places(text: str, project: Project) -> str:
    """``text`` with the test's state dir and project named, as written
    plainly or inside a JSON/TOML string (a non-ASCII letter escaped)."""
    for path, name in ((project.state_dir, "<STATE>"), (project.root, "<PROJECT>")):
        for spelled in (str(path), json.dumps(str(path))[1:-1]):
            text = text.replace(spelled, name)
    # a shell quotes a path that holds a space, and only then
    return re.sub(r"'(<STATE>|<PROJECT>)([^' ]*)'", r"\1\2", text)


def normalise(text: str, project: Project) -> str:
    """``text`` without what differs between two runs of the same step: the
    project's location, run ids, durations and log paths."""
    text = _without_places(text, project)
    text = LOG_PATH.sub(r"\1<LOG>", text)
    text = EVIDENCE_DIGEST.sub(r"\1<DIGEST>", text)
    text = RUN_ID.sub("<RUN>", text)
    return DURATION.sub("<DUR>", text)


def files(project: Project) -> dict[str, str]:
    """Every file of the project outside ``.git``, ``.stepkit`` and
    ``__pycache__``, by relative path; handoffs normalised, the rest with
    only the test's own paths replaced."""
    found = {}
    for path in sorted(project.root.rglob("*")):
        rel = path.relative_to(project.root)
        if not path.is_file() or SKIP_DIRS & set(rel.parts):
            continue
        text = path.read_bytes().decode("utf-8")
        if rel.parts[:2] == ("plans", "handoffs"):
            text = normalise(text, project)
        else:
            text = _without_places(text, project)
        found[rel.as_posix()] = text
    return found


WAITER = """import os
import pathlib
import sys
import time

state = pathlib.Path(os.environ["E2E_STATE_DIR"])
# only the step's own tests gate waits: the step's start, measured in a scratch copy, runs at once
if pathlib.Path.cwd().name == "project" and not (state / "go").exists():
    (state / "started.tmp").write_text(str(os.getpid()))
    os.replace(state / "started.tmp", state / "started")  # seen whole or not at all
    while not (state / "go").exists():
        time.sleep(0.02)
os.execv(sys.executable, [sys.executable, "check.py"])
"""


def waiting_test_cmd(project: Project) -> str:
    """A TEST_CMD that, in the project (not in the scratch copy of the
    step's start), writes ``started`` (its pid) in the state dir, then
    waits for ``go`` there before running the real tests."""
    path = project.state_dir / "waiter.py"
    path.write_text(WAITER)
    return sh(PY, path)


def wait_for_file(path: Path, proc: subprocess.Popen) -> None:
    """Return once ``path`` exists; fail if ``proc`` ends first."""
    wait_until(path.exists, path.name, proc)


def is_running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):  # gone before, or while, its stat was read
        return False
    return fields[0] != "Z"


def interrupt_run(
    project: Project,
    marker: str,
    coder: str | None = None,
    env: dict[str, str] | None = None,
    sig: int = signal.SIGINT,
) -> tuple[int, str, str]:
    """Start ``stepkit run`` (scripted engine), send it ``sig`` once ``marker``
    exists in the state dir, and wait for it to end.

    :return: its exit code, stdout and stderr.
    """
    cmd = [PY, "-m", "stepkit", *project.run_args(coder=coder)]
    # a stepkit that never ends after the signal is sent SIGABRT, on which Python dumps every thread's stack
    env = {**(env or project.env()), "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen(
        cmd,
        cwd=project.root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_file(project.state_dir / marker, proc)
        proc.send_signal(sig)
        try:
            out, err = proc.communicate(timeout=SAFETY_S)
        except subprocess.TimeoutExpired:
            raise AssertionError(_hung(proc, signal.Signals(sig).name)) from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err


def _hung(proc: subprocess.Popen, sent: str) -> str:
    """Why ``communicate`` never returned: stepkit's threads (SIGABRT makes
    Python dump them), or, when stepkit ended, the processes still holding
    its output pipes open."""
    pipes = {
        f"pipe:[{os.fstat(stream.fileno()).st_ino}]"
        for stream in (proc.stdout, proc.stderr)
        if stream
    }
    if proc.poll() is not None:
        holders = []
        for fd_dir in Path("/proc").glob("[0-9]*/fd"):
            if fd_dir.parent.name == str(os.getpid()):
                continue  # this test reads them
            with contextlib.suppress(OSError):
                if any(os.readlink(fd) in pipes for fd in fd_dir.iterdir()):
                    holders.append(
                        f"{fd_dir.parent.name}: {(fd_dir.parent / 'cmdline').read_bytes()!r}"
                    )
        return f"stepkit ended (exit {proc.returncode}) after {sent}, but these hold its output open: {holders}"
    proc.send_signal(signal.SIGABRT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        err = "(no stack: its stderr stayed open)"
    return f"stepkit did not end after {sent}; its threads:\n{err}"


def wait_until_gone(pids: list[int], seconds: float = SAFETY_S) -> list[int]:
    """Wait until none of ``pids`` runs (``seconds`` bounds a hang; 0: look
    once); the ones still running then are SIGKILLed (so a failing test
    leaks nothing) and returned."""
    with contextlib.suppress(AssertionError):
        wait_until(
            lambda: not any(is_running(pid) for pid in pids),
            "end of the processes",
            seconds=seconds,
        )
    alive = [pid for pid in pids if is_running(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    return alive


def assert_stopped(pid_file: Path, what: str, script: Path | None = None) -> None:
    """The process whose pid ``pid_file`` holds did not outlive the
    interrupted run; a leaked one is killed before failing.  A confined
    command tells its PID namespace's pid, which names no process here:
    ``script``, the program it runs, finds it by its command line instead."""
    pids = [int(pid_file.read_text())] if script is None else running(script)
    leaked = [pid for pid in pids if is_running(pid)]
    for pid in leaked:
        os.kill(pid, signal.SIGKILL)
    assert not leaked, f"{what} outlived the interrupted run"


def running(script: Path) -> list[int]:
    """The processes whose command line names ``script``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(script).encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue  # gone
    return found


def assert_gate_stopped(project) -> None:
    """The waiting gate command (its pid in the ``started`` file) did not
    outlive the interrupted run."""
    assert_stopped(
        project.state_dir / "started", "the gate's command", project.state_dir / "waiter.py"
    )


def diff_files(actual: dict[str, str], expected: dict[str, str]) -> str:
    """A unified diff of two :func:`files` results ("" when equal)."""
    out = []
    for name in sorted(set(actual) | set(expected)):
        a, b = expected.get(name), actual.get(name)
        if a != b:
            out.extend(
                difflib.unified_diff(
                    (a or "").splitlines(),
                    (b or "").splitlines(),
                    f"expected/{name}",
                    f"actual/{name}",
                    lineterm="",
                )
            )
    return "\n".join(out)


SLOW_CODER = """import os
import pathlib
import time

state = pathlib.Path(os.environ["E2E_STATE_DIR"])
(state / "coder.tmp").write_text(str(os.getpid()))
os.replace(state / "coder.tmp", state / "coder_started")
pathlib.Path(os.environ["STEPKIT_PROJECT_DIR"], "calc.py").write_text("def add(a, b):\\n    return a +")
while True:
    time.sleep(0.02)  # mid-edit, until stopped
"""


def slow_coder(project: Project) -> str:
    """A coder spec whose coder writes ``coder_started`` (its pid), leaves
    calc.py half-edited and never finishes."""
    path = project.state_dir / "slow_coder.py"
    path.write_text(SLOW_CODER)
    return command_coder(PY, path)


#: A coder that starts a child and a detached process (its own session), tells
#: their pids in ``coder_started``, then edits calc.py until it is stopped.
FAMILY_CODER = """import os
import pathlib
import signal
import subprocess
import sys
import time

state = pathlib.Path(os.environ["E2E_STATE_DIR"])
if os.environ.get("DEAF_CODER"):  # a coder that ignores the stop signals (so do its children)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)


def clean_up(signum, frame):
    time.sleep(0.2)  # what a coder saving its session takes
    (state / "cleaned_up").write_text(signal.Signals(signum).name)
    sys.exit(0)


if os.environ.get("TIDY_CODER"):  # a coder that cleans up when told to stop
    signal.signal(signal.SIGTERM, clean_up)
forever = [sys.executable, "-c", "import time\\nwhile True: time.sleep(0.05)"]
child = subprocess.Popen(forever)
detached = subprocess.Popen(forever, start_new_session=True)
(state / "coder.tmp").write_text(f"{os.getpid()} {child.pid} {detached.pid}")
os.replace(state / "coder.tmp", state / "coder_started")
calc = pathlib.Path(os.environ["STEPKIT_PROJECT_DIR"], "calc.py")
edits = 0
while True:
    edits += 1
    calc.write_text(f"# edit {edits}\\n")
    time.sleep(0.01)
"""


def family_coder(project) -> str:
    path = project.state_dir / "family_coder.py"
    path.write_text(FAMILY_CODER)
    return command_coder(PY, path)


def pids(project, name: str) -> list[int]:
    return [int(pid) for pid in (project.state_dir / name).read_text().split()]
