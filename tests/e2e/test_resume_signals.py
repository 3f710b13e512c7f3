"""Signals: a run killed with SIGKILL in the middle of a slow node, resumed with
``stepkit resume``, ends in the same final state as a run never interrupted;
Ctrl-C (SIGINT) saves the run as interrupted and exits 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from stepkit.workspace.store import store_dir
from tests.support import cli
from tests.support.e2e import sh
from tests.support.graph_helpers import IMPORT_ROOT, write_graph
from tests.support.waiting import SAFETY_S, wait_until

KEEP = (
    "status",
    "node",
    "phase",
    "visits",
    "path",
    "edges",
    "outcome",
    "exit_code",
    "output",
    "state",
)


def stepkit(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return cli.stepkit(*args, env=env(), **kwargs)


def env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(IMPORT_ROOT), os.environ.get("PYTHONPATH", "")]),
    }


def final(project: Path, run_id: str) -> dict:
    cp = json.loads((store_dir(project) / "runs" / run_id / "state.json").read_text())
    return {k: cp[k] for k in KEEP}


def wait_for(path: Path, proc: subprocess.Popen) -> None:
    wait_until(path.exists, "start of the slow node", proc)


def test_sigkill_then_resume_matches_an_uninterrupted_run(tmp_path):
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    graph = write_graph(
        tmp_path,
        {
            "first": {"kind": "script", "call": "tests.support.graph_helpers:bump", "next": "slow"},
            "slow": {
                "kind": "script",
                "call": "tests.support.graph_helpers:wait_for_go",
                "next": "last",
            },
            "last": {
                "kind": "script",
                "call": "tests.support.graph_helpers:bump",
                "next": "end_success",
            },
        },
        name="slow.yaml",
    )
    killed, reference = tmp_path / "killed", tmp_path / "reference"
    killed.mkdir()
    reference.mkdir()
    run_args = ["run", "--graph", str(graph), "--set", f"barrier={barrier}", "--json"]

    proc = subprocess.Popen(
        [sys.executable, "-m", "stepkit", *run_args, "--project-dir", str(killed)],
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(barrier / "started", proc)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=SAFETY_S)
    assert proc.returncode == -signal.SIGKILL
    (run_id,) = os.listdir(store_dir(killed) / "runs")
    cut = json.loads((store_dir(killed) / "runs" / run_id / "state.json").read_text())
    # slow may simply run again: the record of the node before it leads the resume there
    assert (cut["status"], cut["node"], cut["phase"], cut["next"], cut["path"]) == (
        "running",
        "first",
        "finished",
        "slow",
        ["first"],
    )

    (barrier / "go").touch()
    resumed = stepkit("resume", "--project-dir", str(killed), "--json")
    assert resumed.returncode == 0, resumed.stderr
    data = json.loads(resumed.stdout)
    assert (data["outcome"], data["exit_code"], data["run_id"]) == ("STEP_COMPLETE", 0, run_id)
    assert (barrier / "started").read_text() == "slow\nslow\n"  # re-run once, nothing else re-ran

    straight = stepkit(*run_args, "--project-dir", str(reference))
    assert straight.returncode == 0, straight.stderr
    reference_id = json.loads(straight.stdout)["run_id"]
    assert final(killed, run_id) == final(reference, reference_id)
    assert final(killed, run_id)["state"]["count"] == 2


def test_ctrl_c_saves_an_interrupted_checkpoint_and_exits_130(tmp_path):
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    graph = write_graph(
        tmp_path,
        {
            "slow": {
                "kind": "script",
                "call": "tests.support.graph_helpers:wait_for_go",
                "next": "end_success",
            },
        },
        name="slow.yaml",
    )
    project = tmp_path / "project"
    project.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stepkit",
            "run",
            "--graph",
            str(graph),
            "--project-dir",
            str(project),
            "--set",
            f"barrier={barrier}",
        ],
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(barrier / "started", proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=SAFETY_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    (run_id,) = os.listdir(store_dir(project) / "runs")
    assert f"Resume with: stepkit resume {run_id} --project-dir {sh(project)}" in err
    cut = final(project, run_id)
    assert (cut["status"], cut["node"], cut["phase"]) == ("interrupted", "slow", "started")
    (barrier / "go").touch()
    resumed = stepkit("resume", run_id, "--project-dir", str(project))
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("STEP_COMPLETE")
