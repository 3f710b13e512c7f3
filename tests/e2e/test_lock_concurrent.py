"""One run at a time per project, with real concurrent stepkit processes.

The coder of these runs announces itself on a FIFO and then blocks on a
file lock the test holds, so a run stays live exactly as long as the test
wants; the test waits for what happens (a coder starting, a stepkit process
ending) with select on the FIFO and the processes' stderr, never by sleeping.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit.workspace.seal import write_sealed
from stepkit.workspace.store import lock_files, store_dir
from tests.support.e2e import DEVIATION, GOOD_MUL, PY, command_coder

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
#: unconfined (a bwrap that cannot create namespaces): the pids its coders and gates
#: tell from inside a sandbox are their PID namespace's, which name other processes here
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("unconfined")]

BLOCKING_CODER = f"""
import fcntl, os, pathlib, sys
sys.stdin.read()
with open(os.environ["LOCKTEST_EVENTS"], "w") as events:
    events.write(f"started {{os.getpid()}}\\n")
with open(os.environ["LOCKTEST_RELEASE"]) as gate:
    fcntl.flock(gate, fcntl.LOCK_SH)  # blocks until the test lets go of its lock
pathlib.Path(os.environ["STEPKIT_PROJECT_DIR"], "calc.py").write_text({GOOD_MUL!r})
print("CODER_COMPLETE")
"""
BUSY = re.compile(
    r"stepkit: error: run (\S+) \(step 1\) is live in this project \(pid (\d+)\); "
    r"wait for it or stop it"
)


class Coders:
    """The blocking coder's side of the test: the FIFO it announces itself on
    and the lock it waits for."""

    def __init__(self, tmp_path: Path):
        self.script = tmp_path / "blocking_coder.py"
        self.script.write_text(BLOCKING_CODER)
        self.events_path = tmp_path / "coder-events"
        os.mkfifo(self.events_path)
        self.events = os.open(self.events_path, os.O_RDONLY | os.O_NONBLOCK)
        self._writer = os.open(self.events_path, os.O_WRONLY)  # the reader never sees EOF
        self.release_path = tmp_path / "coder-release"
        self.release_path.touch()
        self._gate = open(self.release_path)  # noqa: SIM115 - held until release()
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        self._pending = b""

    @property
    def spec(self) -> str:
        return command_coder(PY, self.script)

    def env(self, project) -> dict[str, str]:
        return project.env(
            LOCKTEST_EVENTS=str(self.events_path), LOCKTEST_RELEASE=str(self.release_path)
        )

    def read_started(self) -> list[int]:
        """The pids of coders that announced themselves since the last call."""
        try:
            self._pending += os.read(self.events, 65536)
        except BlockingIOError:  # nothing announced
            return []
        *lines, self._pending = self._pending.split(b"\n")
        return [int(line.split()[1]) for line in lines if line.startswith(b"started ")]

    def release(self) -> None:
        fcntl.flock(self._gate, fcntl.LOCK_UN)

    def close(self) -> None:
        self._gate.close()
        os.close(self.events)
        os.close(self._writer)


class Stepkit(subprocess.Popen):
    """One ``python -m stepkit ... --json`` process, its stderr collected as it comes."""

    def __init__(self, project, args, env):
        super().__init__(
            [PY, "-m", "stepkit", *args, "--json"],
            cwd=project.root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.err = b""


def watch(procs: list[Stepkit], coders: Coders, done) -> tuple[list[int], list[Stepkit]]:
    """Follow coder starts and stepkit exits as they happen until
    ``done(started, exited)``; return both lists."""
    started: list[int] = []
    exited: list[Stepkit] = []
    streams = {proc.stderr.fileno(): proc for proc in procs}
    while not done(started, exited):
        ready, _, _ = select.select([coders.events, *streams], [], [], 60)
        assert ready, (
            f"nothing happened for 60 s: started {started}, exited {[p.pid for p in exited]}"
        )
        for fd in ready:
            if fd == coders.events:
                started += coders.read_started()
                continue
            chunk = os.read(fd, 65536)
            if chunk:
                streams[fd].err += chunk
            else:
                proc = streams.pop(fd)
                proc.wait()
                exited.append(proc)
    return started, exited


@pytest.fixture
def coders(tmp_path):
    coders = Coders(tmp_path)
    procs: list[subprocess.Popen] = []
    coders.procs = procs
    yield coders
    coders.release()
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    coders.close()


def start(coders: Coders, project, *args: str) -> Stepkit:
    proc = Stepkit(project, args, coders.env(project))
    coders.procs.append(proc)
    return proc


def assert_refused(proc: Stepkit, run_id: str, pid: int) -> None:
    assert proc.returncode == 2, proc.err
    assert proc.stdout.read() == b""
    lines = proc.err.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert BUSY.fullmatch(lines[0]), lines[0]
    assert BUSY.fullmatch(lines[0]).groups() == (run_id, str(pid))


def finish(proc: Stepkit) -> dict:
    out, err = proc.communicate(timeout=120)
    assert out.strip(), (proc.returncode, proc.err + err)
    return json.loads(out)


def run_ids(project) -> list[str]:
    return sorted(p.name for p in (store_dir(project.root) / "runs").iterdir())


def test_two_runs_of_one_step_started_at_once_one_runs_the_other_exits_2(project, coders):
    procs = [
        start(coders, project, *project.run_args("--step", "1", coder=coders.spec))
        for _ in range(2)
    ]

    started, exited = watch(procs, coders, lambda s, e: len(s) > 1 or len(e) == 2 or (s and e))

    assert len(started) == 1 and len(exited) == 1, (started, [p.err for p in exited])
    [winner] = [p for p in procs if p not in exited]
    [run_id] = run_ids(project)
    assert_refused(exited[0], run_id, winner.pid)
    coders.release()
    result = finish(winner)
    assert (result["outcome"], result["run_id"]) == ("PAUSED", run_id)
    assert result["pending"]["node"] == "gate_user_review"


def paused_at_deviation(project, coders) -> str:
    paused = project.run(engine=project.script(orient=DEVIATION), coder=coders.spec)
    assert paused.data["pending"]["node"] == "gate_deviation", paused.stderr
    return paused.data["run_id"]


def test_five_resumes_of_one_paused_run_start_one_coder(project, coders):
    run_id = paused_at_deviation(project, coders)
    procs = [
        start(coders, project, "resume", "--project-dir", str(project.root), "--answer", "proceed")
        for _ in range(5)
    ]

    started, exited = watch(
        procs, coders, lambda s, e: len(s) > 1 or len(e) == 5 or (s and len(e) == 4)
    )

    assert len(started) == 1 and len(exited) == 4, (started, [p.err for p in exited])
    [winner] = [p for p in procs if p not in exited]
    for proc in exited:
        assert_refused(proc, run_id, winner.pid)
    coders.release()
    result = finish(winner)
    assert (result["outcome"], result["run_id"]) == ("PAUSED", run_id)
    assert result["pending"]["node"] == "gate_user_review"
    assert [run_id] == run_ids(project)


def test_a_holder_killed_by_sigkill_leaves_the_lock_to_the_next_run(project, coders):
    first = start(coders, project, *project.run_args("--step", "1", coder=coders.spec))
    [orphan], _ = watch([first], coders, lambda s, e: s or e)
    first.send_signal(signal.SIGKILL)
    first.wait()
    os.kill(orphan, signal.SIGKILL)  # the killed run's coder, in its own session
    [killed_run] = run_ids(project)

    # the step comes from the prompt: the lock names it once the run has resolved it
    second = start(coders, project, *project.run_args(coder=coders.spec), "Execute step 1")
    started, exited = watch([second], coders, lambda s, e: s or e)
    assert started and not exited, second.err
    third = start(coders, project, *project.run_args("--step", "1", coder=coders.spec))
    started, exited = watch([third], coders, lambda s, e: s or e)

    assert not started and exited == [third]
    [live_run] = set(run_ids(project)) - {killed_run}
    assert_refused(third, live_run, second.pid)
    coders.release()
    assert finish(second)["run_id"] == live_run


def test_a_run_whose_pid_was_reused_is_not_still_running(project, coders):
    """A run killed mid-coder, whose pid now belongs to another process (and
    whose stale lock record names that pid): resume takes it over."""
    first = start(coders, project, *project.run_args("--step", "1", coder=coders.spec))
    [orphan], _ = watch([first], coders, lambda s, e: s or e)
    first.send_signal(signal.SIGKILL)
    first.wait()
    os.kill(orphan, signal.SIGKILL)
    [run_id] = run_ids(project)
    other = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    coders.procs.append(other)
    state_file = store_dir(project.root) / "runs" / run_id / "state.json"
    checkpoint = json.loads(state_file.read_text())
    assert checkpoint["status"] == "running"
    write_sealed(state_file, json.dumps({**checkpoint, "pid": other.pid}))
    lock_files(project.root)[1].write_text(
        json.dumps({"command": "run", "pid": other.pid, "run_id": run_id, "step": 1})
    )

    result = project.resume()

    assert result.code == 1, result.stderr
    assert result.outcome == "STEP_FAILED" and result.data["run_id"] == run_id
    assert "implement was interrupted mid-edit" in result.output
    other.stdin.close()


def test_while_a_run_is_live_verify_and_stages_that_run_gates_or_coders_exit_2_and_readers_do_not(
    project, coders
):
    first = start(coders, project, *project.run_args("--step", "1", coder=coders.spec))
    started, exited = watch([first], coders, lambda s, e: s or e)
    assert started and not exited, first.err
    [run_id] = run_ids(project)
    here = ["--project-dir", str(project.root)]
    env = coders.env(project)

    for command in (
        ["verify"],
        ["stage", "verify"],
        ["stage", "implement", "--coder", coders.spec],
        ["stage", "review"],
    ):
        refused = project.stepkit(*command, *here, env=env)
        assert (refused.code, refused.stdout) == (2, ""), (command, refused.stderr)
        assert BUSY.fullmatch(refused.stderr.strip()).groups() == (run_id, str(first.pid)), command
    for command in (["status"], ["graph", "--run", run_id]):
        assert project.stepkit(*command, *here, env=env, json_out=False).code == 0, command
    assert coders.read_started() == []
    coders.release()
    assert finish(first)["run_id"] == run_id


#: The blocking coder, after deleting the run store and any ``.stepkit/``
#: (as ``git clean -xfd`` or a careless ``rm -rf`` would).
#: deletes the run store and an earlier version's, then says in ``{seen}``
#: whether both were gone right after (the step's start, measured beside the
#: coder, may write its records into a new store a moment later)
DELETING_CODER = (
    """
import os, shutil, subprocess
common = subprocess.run(["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True).stdout.strip()
# the start's measure, beside the coder, may be writing into the store meanwhile (on a loaded
# machine a file it makes while the tree is removed leaves a directory behind): deleted again
for _ in range(100):
    for doomed in (f"{common}/stepkit", ".stepkit"):
        shutil.rmtree(doomed, ignore_errors=True)
    gone = not os.path.exists(f"{common}/stepkit") and not os.path.exists(".stepkit")
    if gone:
        break
open({seen!r}, "w").write(str(gone))
"""
    + BLOCKING_CODER
)


def test_a_coder_deleting_the_run_store_does_not_free_the_lock(project, coders, tmp_path):
    (project.root / ".stepkit").mkdir()  # an earlier version's leftovers, deleted too
    deleting, seen = tmp_path / "deleting_coder.py", tmp_path / "store_gone"
    deleting.write_text(DELETING_CODER.replace("{seen!r}", repr(str(seen))))
    first = start(
        coders, project, *project.run_args("--step", "1", coder=command_coder(PY, deleting))
    )
    started, exited = watch([first], coders, lambda s, e: s or e)
    assert started and not exited, first.err
    assert seen.read_text() == "True"  # the coder deleted both

    second = start(coders, project, *project.run_args("--step", "1", coder=coders.spec))
    started, exited = watch([second], coders, lambda s, e: s or e)

    assert not started and exited == [second]
    busy = BUSY.fullmatch(second.err.decode().strip())
    assert second.returncode == 2 and busy and busy.group(2) == str(first.pid), second.err
    coders.release()
    result = finish(first)
    assert result["run_id"] == busy.group(1)
