"""SIGTERM and SIGHUP (what ``timeout``, CI cancellation and ``docker stop``
send) stop a run the way Ctrl-C does: the running coder's or gate's
processes are stopped, detached ones included, the checkpoint says
interrupted, the resume command is printed, and stepkit exits 128+signal
(an exit, not death by the signal).  A real ``stepkit run`` gets the real
signal; the coder and gate tell the test their pids through files."""

from __future__ import annotations

import signal
import time

import pytest

from tests.crash_support import (
    checkpoint,
    drive,
    install_killer,
    interrupt_run,
    is_running,
    wait_until_gone,
    waiting_test_cmd,
)
from tests.e2e_support import PY, make_project

#: A coder that starts a child and a detached process (its own session), tells
#: their pids in ``coder_started``, then edits calc.py until it is stopped.
FAMILY_CODER = '''import os
import pathlib
import subprocess
import sys
import time

state = pathlib.Path(os.environ["E2E_STATE_DIR"])
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
'''


def family_coder(project) -> str:
    path = project.state_dir / "family_coder.py"
    path.write_text(FAMILY_CODER)
    return f"command:{PY} {path}"


def pids(project, name: str) -> list[int]:
    return [int(pid) for pid in (project.state_dir / name).read_text().split()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_stops_the_coder_and_its_processes_and_saves_the_run(tmp_path, sig):
    project = make_project(tmp_path)
    code, out, err = interrupt_run(project, "coder_started", coder=family_coder(project), sig=sig)
    signalled = time.monotonic()
    started = pids(project, "coder_started")
    left = wait_until_gone(started, 5.0 - (time.monotonic() - signalled))
    assert not left, f"still running 5 s after {sig.name}: {left} of coder, child, detached {started}"

    assert code == 128 + sig, (code, err)
    (run_id,) = [p.name for p in (project.root / ".stepkit" / "runs").iterdir()]
    assert (f"stepkit: interrupted by {sig.name}; run {run_id} saved. "
            f"Resume with: stepkit resume {run_id} --project-dir {project.root}") in err
    assert "Traceback" not in err and out == ""
    cut = checkpoint(project, run_id)
    assert (cut["status"], cut["node"], cut["phase"]) == ("interrupted", "implement", "started")

    edited = (project.root / "calc.py").read_text()
    result = project.resume()  # a coder cut off mid-edit is never re-run
    assert (result.code, result.outcome) == (1, "STEP_FAILED"), result.stderr
    assert (project.root / "calc.py").read_text() == edited  # nothing kept editing the tree


def test_sigterm_during_a_gate_stops_it_and_resume_finishes_the_run(tmp_path):
    project = make_project(tmp_path)
    install_killer(project)  # never fires: the same project as the crash tests
    env = project.env(TEST_CMD=waiting_test_cmd(project))
    code, _, err = interrupt_run(project, "started", env=env, sig=signal.SIGTERM)
    gate = int((project.state_dir / "started").read_text())
    assert not wait_until_gone([gate]), "the gate's command outlived the run"
    assert code == 143, err
    (run_id,) = [p.name for p in (project.root / ".stepkit" / "runs").iterdir()]
    cut = checkpoint(project, run_id)
    assert (cut["status"], cut["node"], cut["phase"]) == ("interrupted", "verify_tests", "started")

    (project.state_dir / "go").touch()
    result, codes = drive(project, env, project.resume(env=env))
    assert codes == [5, 0] and result.outcome == "STEP_COMPLETE", result.stderr
    assert result.data["run_id"] == run_id
    assert project.plan_status(1) == "complete"
    assert not is_running(gate)
