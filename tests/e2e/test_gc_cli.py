"""``stepkit gc`` on a run store made by real runs: the logs of finished runs
past the newest N or older than D days go; a paused run's logs, every
checkpoint and the newest runs' logs stay, and the paused run still resumes."""

from __future__ import annotations

import os
import time

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import make_project

DAY_S = 86_400


def finished_run(project, *extra: str) -> str:
    paused = project.run(*extra)
    assert paused.outcome == "PAUSED", paused.stderr
    done = project.resume("reject")
    assert done.outcome == "STEP_REJECTED", done.stderr
    return done.data["run_id"]


@pytest.mark.slow
def test_gc_prunes_finished_runs_by_count_and_age_never_a_paused_one(tmp_path):
    project = make_project(tmp_path)
    oldest = finished_run(project)
    middle = finished_run(project, "--rerun")
    newest = finished_run(project, "--rerun")
    paused = project.run("--rerun")
    assert paused.outcome == "PAUSED", paused.stderr
    runs = store_dir(project.root) / "runs"
    logs = {run: runs / run / "logs" for run in (oldest, middle, newest, paused.data["run_id"])}
    assert all(any(path.iterdir()) for path in logs.values()), "every run wrote gate logs"
    # the paused run is the oldest by age: its age never counts
    for run in (oldest, paused.data["run_id"]):
        state = runs / run / "state.json"
        os.utime(state, (time.time() - 40 * DAY_S,) * 2)

    by_age = project.stepkit(
        "gc",
        "--older-than",
        "30",
        "--keep",
        "0",
        "--project-dir",
        str(project.root),
        json_out=False,
    )
    assert by_age.code == 0, by_age.stderr
    assert f"pruned the logs of run {oldest}" in by_age.stdout
    assert not any(logs[oldest].iterdir())
    assert all(any(logs[run].iterdir()) for run in (middle, newest, paused.data["run_id"]))

    by_count = project.stepkit(
        "gc", "--keep", "1", "--older-than", "0", "--project-dir", str(project.root), json_out=False
    )
    assert by_count.code == 0, by_count.stderr
    assert f"pruned the logs of run {middle}" in by_count.stdout
    assert not any(logs[middle].iterdir())
    assert any(logs[newest].iterdir()) and any(logs[paused.data["run_id"]].iterdir())
    assert all((runs / run / "state.json").is_file() for run in logs)

    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE", done.stderr


def test_gc_refuses_a_negative_count(tmp_path):
    project = make_project(tmp_path)
    refused = project.stepkit(
        "gc", "--keep", "-1", "--project-dir", str(project.root), json_out=False
    )
    assert refused.code == 2 and "--keep" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
