"""SIGTERM and SIGHUP (what ``timeout``, CI cancellation and ``docker stop``
send) stop a run the way Ctrl-C does: the running coder's or gate's
processes are stopped, detached ones included, the checkpoint says
interrupted, the resume command is printed, and stepkit exits 128+signal
(an exit, not death by the signal).  A real ``stepkit run`` gets the real
signal; the coder and gate tell the test their pids through files.

Every wait is on the event (a file, stepkit's exit, a process's end): the
coder's processes must be gone once stepkit has exited, however long a
loaded machine makes that take; stepkit's grace before its SIGKILL
(``KILL_GRACE_S`` in ``stepkit/workspace/process.py``) is what bounds it."""

from __future__ import annotations

import signal

import pytest

from stepkit.workspace.store import store_dir
from tests.support.crash import (
    checkpoint,
    drive,
    family_coder,
    install_killer,
    interrupt_run,
    is_running,
    pids,
    wait_until_gone,
    waiting_test_cmd,
)
from tests.support.e2e import make_project
from tests.support.variants import first_by_default

#: unconfined (a bwrap that cannot create namespaces): the pids its coders and gates
#: tell from inside a sandbox are their PID namespace's, which name other processes here
pytestmark = pytest.mark.usefixtures("unconfined")


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig", first_by_default([signal.SIGTERM, signal.SIGHUP]), ids=["SIGTERM", "SIGHUP"]
)
def test_a_stop_signal_stops_the_coder_and_its_processes_and_saves_the_run(tmp_path, sig):
    project = make_project(tmp_path)
    code, out, err = interrupt_run(project, "coder_started", coder=family_coder(project), sig=sig)
    started = pids(project, "coder_started")
    left = wait_until_gone(started)
    assert not left, (
        f"outlived stepkit after {sig.name}: {left} of coder, child, detached {started}"
    )

    assert code == 128 + sig, (code, err)
    (run_id,) = [p.name for p in (store_dir(project.root) / "runs").iterdir()]
    assert (
        f"stepkit: interrupted by {sig.name}; run {run_id} saved. "
        f"Resume with: stepkit resume {run_id}\n"  # run in the project: no --project-dir
    ) in err
    assert "Traceback" not in err and out == ""
    cut = checkpoint(project, run_id)
    assert (cut["status"], cut["node"], cut["phase"]) == ("interrupted", "implement", "started")

    edited = (project.root / "calc.py").read_text()
    result = project.resume()  # a coder cut off mid-edit is never re-run
    assert (result.code, result.outcome) == (1, "STEP_FAILED"), result.stderr
    assert (project.root / "calc.py").read_text() == edited  # nothing kept editing the tree


@pytest.mark.slow
def test_a_coder_deaf_to_sigterm_is_killed_by_stepkit(tmp_path):
    project = make_project(tmp_path)
    env = project.env(DEAF_CODER="1")
    coder = family_coder(project).replace(
        "command:", "command:exec "
    )  # the deaf one leads its group
    code, _, err = interrupt_run(project, "coder_started", coder=coder, env=env, sig=signal.SIGTERM)
    started = pids(project, "coder_started")
    left = wait_until_gone(started)  # only stepkit's SIGKILL ends them: they ignore the rest
    assert not left, f"outlived stepkit after SIGTERM: {left} of coder, child, detached {started}"
    assert code == 143, err


def test_a_coder_gets_its_grace_to_clean_up_before_sigkill(tmp_path):
    project = make_project(tmp_path)
    coder = family_coder(project).replace("command:", "command:exec ")
    code, _, err = interrupt_run(
        project, "coder_started", coder=coder, env=project.env(TIDY_CODER="1"), sig=signal.SIGTERM
    )
    assert not wait_until_gone(pids(project, "coder_started"))
    assert code == 143, err
    assert (project.state_dir / "cleaned_up").read_text() == "SIGTERM"


@pytest.mark.slow
def test_sigterm_during_a_gate_stops_it_and_resume_finishes_the_run(tmp_path):
    project = make_project(tmp_path)
    install_killer(project)  # never fires: the same project as the crash tests
    env = project.env(TEST_CMD=waiting_test_cmd(project))
    code, _, err = interrupt_run(project, "started", env=env, sig=signal.SIGTERM)
    gate = int((project.state_dir / "started").read_text())
    assert not wait_until_gone([gate]), "the gate's command outlived the run"
    assert code == 143, err
    (run_id,) = [p.name for p in (store_dir(project.root) / "runs").iterdir()]
    cut = checkpoint(project, run_id)
    assert (cut["status"], cut["node"], cut["phase"]) == ("interrupted", "verify_tests", "started")

    (project.state_dir / "go").touch()
    result, codes = drive(project, env, project.resume(env=env))
    assert codes == [5, 0] and result.outcome == "STEP_COMPLETE", result.stderr
    assert result.data["run_id"] == run_id
    assert project.plan_status(1) == "complete"
    assert not is_running(gate)
