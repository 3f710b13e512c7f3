"""A stepkit SIGKILLed while its coder runs cannot stop the coder: the coder,
its child and what it detached go on editing the tree.  ``stepkit resume``
of that run stops them first (each command of a run carries the run's
directory in ``STEPKIT_RUN_DIR``, which they inherit), says so in an event,
and only then goes on.  This is the defence where there is no sandbox (the
run here is unconfined): a confined coder dies with stepkit
(``--die-with-parent``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess

from stepkit.workspace.store import store_dir
from tests.support.crash import family_coder, is_running, pids, wait_for_file, wait_until_gone
from tests.support.e2e import PY, make_project, unconfined_env


def test_resume_stops_what_a_killed_run_left_running(tmp_path):
    project = make_project(tmp_path)
    cmd = [PY, "-m", "stepkit", *project.run_args(coder=family_coder(project))]
    proc = subprocess.Popen(
        cmd,
        cwd=project.root,
        env=project.env(**unconfined_env(tmp_path)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_file(project.state_dir / "coder_started", proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    left = pids(project, "coder_started")
    try:
        assert all(is_running(pid) for pid in left)  # nothing could stop them
        result = project.resume(env=project.env(**unconfined_env(tmp_path)))
        still = [pid for pid in left if is_running(pid)]
    finally:
        wait_until_gone(left, 0)
    assert not still, f"{still} of coder, child, detached {left} outlived the resume"
    assert (result.code, result.outcome) == (1, "STEP_FAILED"), result.stderr
    assert "implement was interrupted mid-edit" in result.output
    run_dir = store_dir(project.root) / "runs" / result.data["run_id"]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    (stopped,) = [e for e in events if e["event"] == "leftovers_stopped"]
    assert set(left) <= {p["pid"] for p in stopped["processes"]}  # and the shell that ran the coder
