"""A finished step is not redone by accident: a prompt names a step only by
explicit wording, ``run`` on a complete step exits 2 before anything runs
unless ``--rerun``, and a rerun moves the previous handoff aside.  Real CLI, real
git project (tests/support/e2e.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import make_project

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted((root / "plans").rglob("*"))
        if p.is_file()
    }


def runs(root: Path) -> list[str]:
    store = store_dir(root) / "runs"
    return sorted(p.name for p in store.iterdir()) if store.is_dir() else []


@pytest.fixture
def done(tmp_path):
    """A project whose step 1 was run and approved."""
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.code == 5, paused.stderr
    assert project.resume("approve").outcome == "STEP_COMPLETE"
    assert project.plan_status(1) == "complete"
    return project


def test_a_prompt_that_only_mentions_a_finished_step_runs_the_next_one(done):
    approved = done.handoff(1).read_bytes()
    result = done.run("Step 1 is done and approved; continue with the plan")
    assert result.code == 5, result.stderr
    assert result.data["step"] == 2
    assert done.handoff(1).read_bytes() == approved


@pytest.mark.parametrize(
    "args", [("--step", "1"), ("execute step 1",), ("Please implement step 1 now",)]
)
def test_running_a_complete_step_exits_2_before_anything_runs(done, args):
    before, calls, run_ids = snapshot(done.root), done.coder_calls(), runs(done.root)
    result = done.run(*args, json_out=False)
    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        (
            "stepkit: error: step 1 (Add mul) is already complete (status: complete; handoff "
            "01-mul.md says result: complete): it is not run again unless you pass --rerun"
        )
    ]
    assert snapshot(done.root) == before
    assert done.coder_calls() == calls and runs(done.root) == run_ids


def test_a_step_paused_at_its_final_gate_is_not_started_again_either(tmp_path):
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.code == 5  # paused at the final gate: in progress, no handoff approved yet
    assert project.plan_status(1) == "in-progress"
    assert not project.handoff(1).exists()
    result = project.run(json_out=False)
    assert result.code == 2
    run_id = paused.data["run_id"]
    assert (
        f"step 1 (Add mul) is paused: run {run_id} waits at gate_user_review "
        f"(stepkit resume {run_id}); it is not started again unless you pass --rerun"
    ) in result.stderr


def test_a_rerun_moves_the_previous_handoff_aside_and_says_where(done):
    approved = done.handoff(1).read_bytes()
    paused = done.run("--step", "1", "--rerun")
    assert paused.code == 5, paused.stderr
    # moved, not copied: while the rerun waits, no approved handoff says the step is done
    assert not done.handoff(1).exists()
    # where the user decides, the question says where the previous handoff went
    asked = next(
        line
        for line in paused.data["pending"]["question"].splitlines()
        if line.startswith("Previous handoff kept at (a rerun): ")
    )
    kept_at = done.root / asked.removeprefix("Previous handoff kept at (a rerun): ")  # relative
    assert kept_at.read_bytes() == approved
    finished = done.resume("approve")
    assert finished.outcome == "STEP_COMPLETE"
    line = next(
        line
        for line in finished.output.splitlines()
        if line.startswith("Previous handoff kept at: ")
    )
    kept = Path(line.removeprefix("Previous handoff kept at: "))
    assert kept.read_bytes() == approved
    assert kept.is_relative_to(store_dir(done.root) / "runs" / paused.data["run_id"])
    assert done.handoff(1).is_file() and done.plan_status(1) == "complete"


def test_a_prompt_names_a_step_only_to_run_it(done):
    result = done.run("do not run step 1; step 1 is fine")
    assert result.code == 5 and result.data["step"] == 2
