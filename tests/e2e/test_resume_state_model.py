"""``stepkit resume`` holds a checkpoint to the graph's state model: a state
key the model lacks, a value of the wrong type, or a checkpoint of a newer
format is refused with one line on stderr, exit 2, and nothing runs (the
run's events and state.json stay as they were).  A checkpoint of the
current format without a version field still resumes.

The runs are real: the real CLI runs step 1 of a real git project to its
final approval, and the test edits the paused run's ``state.json``."""

from __future__ import annotations

import json

import pytest

from stepkit.workspace.seal import read_sealed, write_sealed
from stepkit.workspace.store import store_dir
from tests.support.e2e import make_project

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow


@pytest.fixture
def paused(tmp_path):
    project = make_project(tmp_path)
    result = project.run()
    assert result.code == 5, result.stderr + result.stdout
    run_dir = store_dir(project.root) / "runs" / result.data["run_id"]
    return project, run_dir


def edit_state(run_dir, change):
    path = run_dir / "state.json"
    data = json.loads(read_sealed(path))  # the checkpoint is sealed: edited as stepkit writes it
    change(data)
    write_sealed(path, json.dumps(data))


def refused(project, run_dir, *words):
    before = {name: (run_dir / name).read_bytes() for name in ("events.jsonl", "state.json")}
    result = project.stepkit(
        "resume", run_dir.name, "--project-dir", str(project.root), "--answer", "approve"
    )
    assert result.code == 2, result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert result.stdout == ""
    assert {name: (run_dir / name).read_bytes() for name in before} == before  # nothing ran
    assert project.plan_status(1) == "in-progress"
    return lines[0]


@pytest.mark.parametrize("key", ["reviewd_report", "approved_by_reviewer"])
def test_a_state_key_the_model_lacks_is_refused(paused, key):
    project, run_dir = paused
    edit_state(run_dir, lambda data: data["state"].update({key: "yes"}))
    refused(project, run_dir, f"'{key}'", "not a key of the state")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("fix_attempts", "two"),
        ("gates", "all passed"),
        ("gates", [{"name": "tests", "status": "passed with flying colours"}]),
        ("approved", {"yes": True}),
        ("verified_tree", ["calc.py"]),
    ],
)
def test_a_value_of_the_wrong_type_is_refused(paused, key, value):
    project, run_dir = paused
    edit_state(run_dir, lambda data: data["state"].update({key: value}))
    refused(project, run_dir, f"'{key}'")


def test_a_newer_format_is_refused(paused):
    project, run_dir = paused
    edit_state(run_dir, lambda data: data.update(format_version=99))
    refused(project, run_dir, "format 99", "newer")


def test_a_checkpoint_without_a_version_field_still_resumes(paused):
    project, run_dir = paused
    edit_state(run_dir, lambda data: data.pop("format_version"))
    done = project.resume("approve")
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout


def test_a_set_value_is_state_as_the_user_gave_it(tmp_path):
    """``--set`` tunables reach the state without being model fields; a resume keeps taking them."""
    project = make_project(tmp_path)
    paused = project.run("--set", "llm_max_retries=1")
    assert paused.code == 5, paused.stderr + paused.stdout
    done = project.resume("approve")
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout


def test_the_json_object_of_run_and_resume_keeps_its_fields_in_order(paused):
    """The step's fields come from the protocol (stepkit.protocol.result), in the contract's order."""
    project, run_dir = paused
    fields = [
        "outcome",
        "exit_code",
        "run_id",
        "step",
        "title",
        "plan",
        "handoff",
        "handoff_draft",
        "gates",
        "fix_attempts",
        "usage",
        "output",
    ]
    paused_again = project.stepkit("resume", run_dir.name, "--project-dir", str(project.root))
    assert list(paused_again.data) == [*fields, "run_dir", "pending"]
    assert paused_again.data["step"] == 1 and paused_again.data["plan"].endswith("01-mul.md")
    assert [gate["name"] for gate in paused_again.data["gates"]] == [
        "format",
        "lint",
        "build",
        "tests",
    ]
    done = project.resume("approve")
    assert list(done.data) == [*fields, "run_dir"] and done.data["handoff"].endswith("01-mul.md")
