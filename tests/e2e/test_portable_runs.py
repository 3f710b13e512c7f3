"""Portable runs: the checkpoint keeps paths relative to the project, so a
run paused at the final gate and then moved (``mv``) or copied (``cp -a``,
as a CI job restoring ``.stepkit/`` into another checkout does) is resumed
on the project it is resumed in; the original of a copy is untouched.  A
checkpoint written with absolute paths (format 1) still resumes, moved too.
A status write that fails is never STEP_COMPLETE."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from stepkit.engine.checkpoint import CHECKPOINT_FORMAT
from stepkit.workspace.seal import write_sealed
from stepkit.workspace.store import store_dir
from tests.support.crash import files
from tests.support.e2e import Project, make_project

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow


def paused_at_final_gate(tmp_path) -> tuple[Project, str]:
    project = make_project(tmp_path, reviewer=False)
    first = project.run()
    assert (first.code, first.data["pending"]["node"]) == (5, "gate_user_review"), first.stderr
    return project, first.data["run_id"]


def state_file(project: Project, run_id: str):
    return store_dir(project.root) / "runs" / run_id / "state.json"


def relocate(project: Project, how: str, target) -> Project:
    """``mv`` or ``cp -a`` the project to ``target``; the project there."""
    subprocess.run(
        [how, *(["-a"] if how == "cp" else []), str(project.root), str(target)], check=True
    )
    return Project(target, project.state_dir)


def assert_completed_in(project: Project, result, run_id: str) -> None:
    assert (result.code, result.outcome, result.data["run_id"]) == (0, "STEP_COMPLETE", run_id), (
        result.stderr + result.output
    )
    assert project.plan_status(1) == "complete"
    assert f"Plan: {project.root / 'plans' / 'steps' / '01-mul.md'}" in result.output
    assert result.data["handoff"] == str(project.handoff(1)) and project.handoff(1).is_file()


@pytest.mark.parametrize("how", ["mv", "cp"])
def test_a_moved_or_copied_run_resumes_on_the_project_it_is_resumed_in(tmp_path, how):
    project, run_id = paused_at_final_gate(tmp_path)
    original = files(project)
    there = relocate(project, how, tmp_path / "elsewhere")

    result = there.resume("approve")
    assert_completed_in(there, result, run_id)
    if how == "cp":
        assert files(project) == original  # the original's plan is still in progress
        assert project.plan_status(1) == "in-progress"
        assert json.loads(state_file(project, run_id).read_text())["status"] == "paused"
    else:
        assert not project.root.exists()


def test_the_checkpoint_keeps_project_paths_relative(tmp_path):
    project, run_id = paused_at_final_gate(tmp_path)
    stored = json.loads(state_file(project, run_id).read_text())
    assert (stored["settings"]["project_dir"], stored["settings"]["plans_dir"]) == (".", "plans")
    state = stored["state"]
    assert (state["plan_path"], state["handoff_path"]) == (
        "plans/steps/01-mul.md",
        "plans/handoffs/01-mul.md",
    )
    assert [s["path"] for s in state["later_steps"]] == [
        "plans/steps/02-div.md",
        "plans/steps/03-pow.md",
    ]
    store = store_dir(project.root).relative_to(project.root.resolve()).as_posix()
    assert state["coder_result"]["log"].startswith(f"{store}/runs/{run_id}/logs/")
    assert ["state", "later_steps", 1, "path"] in stored["relative_paths"]
    assert str(project.root) not in json.dumps(
        {"settings": stored["settings"], "state": state["gates"]}
    )


def test_a_format_1_checkpoint_with_absolute_paths_resumes_after_a_move(tmp_path):
    project, run_id = paused_at_final_gate(tmp_path)
    path = state_file(project, run_id)
    data = json.loads(path.read_text())
    for where in data.pop("relative_paths"):  # back to format 1: every path absolute
        *parents, last = where
        holder = data
        for key in parents:
            holder = holder[key]
        holder[last] = (
            str(project.root) if holder[last] == "." else f"{project.root}/{holder[last]}"
        )
    data["format_version"] = 1
    assert data["state"]["plan_path"] == str(project.plans / "steps" / "01-mul.md")
    write_sealed(path, json.dumps(data))  # as adopted from an earlier version's store
    there = relocate(project, "mv", tmp_path / "moved")

    assert_completed_in(there, there.resume("approve"), run_id)
    assert json.loads(state_file(there, run_id).read_text())["format_version"] == CHECKPOINT_FORMAT


def test_a_status_write_that_fails_ends_step_failed_with_the_reason(tmp_path):
    project, run_id = paused_at_final_gate(tmp_path)
    plan = project.plans / "steps" / "01-mul.md"
    plan.unlink()  # the approval's status write cannot succeed

    result = project.resume("approve")
    assert (result.code, result.outcome) == (1, "STEP_FAILED"), result.output
    lines = result.output.splitlines()
    assert lines[0] == "STEP_FAILED" and "STEP_COMPLETE" not in result.output
    reason = next(line for line in lines if line.startswith("Reason: "))
    assert "end_success" in reason and str(plan) in reason and "cannot set the status" in reason
    edges = json.loads(state_file(project, run_id).read_text())["edges"]
    assert edges[-1][:2] == ["end_success", "end_failure"]


def test_a_format_1_checkpoint_moved_in_the_old_layout_is_rebased_from_its_own_project_dir(
    tmp_path,
):
    """A format-1 file whose project was moved: its absolute paths name the
    old place, the run store is in the new one; nothing of the old place is used."""
    project, run_id = paused_at_final_gate(tmp_path)
    path = state_file(project, run_id)
    data = json.loads(path.read_text())
    data.pop("relative_paths")
    data["format_version"] = 1
    old = tmp_path / "old-place"
    data["settings"]["project_dir"], data["settings"]["plans_dir"] = str(old), str(old / "plans")
    data["state"]["plan_path"] = str(old / "plans" / "steps" / "01-mul.md")
    data["state"]["handoff_path"] = str(old / "plans" / "handoffs" / "01-mul.md")
    write_sealed(path, json.dumps(data))  # as adopted from an earlier version's store
    shutil.copytree(project.plans, old / "plans")  # a stale copy where the run once was
    stale = {p: p.read_bytes() for p in old.rglob("*") if p.is_file()}

    assert_completed_in(project, project.resume("approve"), run_id)
    assert {p: p.read_bytes() for p in old.rglob("*") if p.is_file()} == stale
