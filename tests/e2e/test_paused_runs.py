"""Paused runs are visible and never guessed at: ``stepkit status`` lists
them with their age (table and ``--json``, which only adds a field), and
``stepkit resume`` without a run id refuses, naming them, to pick among
paused runs of different steps.  Real git project, real CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from stepkit.workspace.seal import read_sealed, write_sealed
from stepkit.workspace.store import store_dir
from tests.support.e2e import make_project

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow


@pytest.fixture
def two_steps_paused(tmp_path):
    """Step 1 and step 2 paused at their final approvals (step 1's handoff is
    not approved yet, so step 2 proceeds past its unmet dependency)."""
    project = make_project(tmp_path)
    first = project.run()
    assert first.code == 5, first.stderr + first.stdout
    second = project.run("--step", "2", "--answer", "gate_blocked=yes")
    assert second.code == 5, second.stderr + second.stdout
    return project, first.data["run_id"], second.data["run_id"]


def age_by(project, run_id, hours):
    path = store_dir(project.root) / "runs" / run_id / "state.json"
    data = json.loads(read_sealed(path))  # the checkpoint is sealed: edited as stepkit writes it
    data["updated_at"] = (datetime.now(UTC) - timedelta(hours=hours)).isoformat()
    write_sealed(path, json.dumps(data))


def test_status_lists_paused_runs_with_their_age(two_steps_paused):
    project, first, second = two_steps_paused
    age_by(project, first, 3)
    done = project.stepkit("status", "--project-dir", str(project.root))
    assert done.code == 0, done.stderr
    assert list(done.data)[:4] == ["plans_dir", "next", "steps", "problems"]  # fields only added
    runs = {run["run_id"]: run for run in done.data["paused_runs"]}
    assert set(runs) == {first, second}
    assert runs[first]["step"] == 1 and runs[first]["node"] == "gate_user_review"
    assert runs[second]["step"] == 2 and runs[second]["node"] == "gate_user_review"
    assert 3 * 3600 <= runs[first]["age_s"] < 3 * 3600 + 600 and runs[first]["age"] == "3 h"
    assert runs[second]["age_s"] < 600
    assert runs[first]["run_dir"].endswith(first)

    table = project.stepkit("status", "--project-dir", str(project.root), json_out=False)
    assert table.code == 0, table.stderr
    assert "Paused runs (2):" in table.stdout
    line = next(line for line in table.stdout.splitlines() if first in line)
    assert "step 1" in line and "gate_user_review" in line and "paused 3 h ago" in line


def test_status_without_runs_has_an_empty_list(tmp_path):
    project = make_project(tmp_path)
    done = project.stepkit("status", "--project-dir", str(project.root))
    assert done.code == 0 and done.data["paused_runs"] == []
    assert (
        "Paused runs"
        not in project.stepkit("status", "--project-dir", str(project.root), json_out=False).stdout
    )


def test_resume_without_a_run_id_refuses_to_pick_among_steps_and_names_them(two_steps_paused):
    project, first, second = two_steps_paused
    before = {
        run: (store_dir(project.root) / "runs" / run / "state.json").read_bytes()
        for run in (first, second)
    }
    refused = project.resume("approve")
    assert refused.code == 2, refused.stderr + refused.stdout
    (line,) = refused.stderr.strip().splitlines()
    assert first in line and second in line and "step 1" in line and "step 2" in line
    assert {
        run: (store_dir(project.root) / "runs" / run / "state.json").read_bytes() for run in before
    } == before

    named = project.stepkit(
        "resume", first, "--project-dir", str(project.root), "--answer", "approve"
    )
    assert named.code == 0 and named.outcome == "STEP_COMPLETE", named.stderr + named.stdout


def test_resume_without_a_run_id_takes_the_only_step_waiting(tmp_path):
    project = make_project(tmp_path)
    assert project.run().code == 5
    assert project.run("--rerun").code == 5  # a second run of step 1, paused at the same gate
    done = project.resume("approve")
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
