"""The checkpoint's format version: ``state.json`` keeps every key of the run
store's contract and adds ``format_version`` and ``relative_paths``; a
checkpoint written before formats existed resumes; a newer format, or a
file that is not a checkpoint, is refused with one line (exit 2).  The
installed files' fingerprint is kept apart, sealed, and read back when the
run goes on; one edited or swapped is refused as an edited checkpoint is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.api import resume_run, run_step
from stepkit.cli import main
from stepkit.engine.checkpoint import CHECKPOINT_FORMAT
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.gate_commands import INSTALLED_KEY
from stepkit.workspace.seal import is_apart, read_sealed, write_sealed
from tests.support.graph_helpers import write_graph

#: The keys of state.json in the release before format versions (the run store's contract).
PREVIOUS_KEYS = {
    "run_id",
    "graph",
    "graph_name",
    "settings",
    "status",
    "node",
    "phase",
    "next",
    "visits",
    "path",
    "edges",
    "pending",
    "outcome",
    "exit_code",
    "output",
    "started_at",
    "updated_at",
    "finished_at",
    "active_s",
    "pid",
    "resumes",
    "state",
}


def pm():
    return get_plugin_manager(builtins=["stepkit.plugins.ask"])


@pytest.fixture
def paused(tmp_path: Path):
    """A run paused at an input node: (project, run id, its state.json)."""
    project = tmp_path / "project"
    project.mkdir()
    graph = write_graph(
        project,
        {
            "first": {
                "kind": "script",
                "call": "tests.support.graph_helpers:bump",
                "next": "why",
                "outputs": ["count"],
            },
            "why": {"kind": "input", "question": "Why?", "key": "reason", "next": "end_success"},
        },
    )
    result = run_step(project_dir=project, graph=graph, pm=pm())
    assert result.outcome == "PAUSED"
    return project, result.run_id, Path(result.run_dir) / "state.json"


def rewrite(state_file: Path, change) -> None:
    """Change the checkpoint as another stepkit would have written it (sealed)."""
    data = json.loads(state_file.read_text())
    change(data)
    write_sealed(state_file, json.dumps(data))


def test_state_json_keeps_every_key_and_adds_the_format(paused):
    _, _, state_file = paused
    data = json.loads(state_file.read_text())
    added = {"format_version", "relative_paths", "seal", "finishing"}  # keys are only added
    assert set(data) == PREVIOUS_KEYS | added
    assert data["format_version"] == CHECKPOINT_FORMAT == 6
    assert (data["status"], data["pending"]["node"], data["state"]["count"]) == ("paused", "why", 1)


def test_a_checkpoint_without_a_format_resumes_and_is_saved_in_the_current_one(paused):
    project, run_id, state_file = paused
    rewrite(state_file, lambda data: data.pop("format_version"))
    done = resume_run(run_id, answer="because", project_dir=project, pm=pm())
    assert (done.outcome, done.state["reason"], done.state["count"]) == (
        "STEP_COMPLETE",
        "because",
        1,
    )
    data = json.loads(state_file.read_text())
    assert (
        data["format_version"] == CHECKPOINT_FORMAT
        and data["status"] == "finished"
        and data["resumes"] == 1
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda data: data.update(format_version=CHECKPOINT_FORMAT + 1),
            (
                f"checkpoint format {CHECKPOINT_FORMAT + 1} is newer than this stepkit "
                f"understands ({CHECKPOINT_FORMAT}); upgrade stepkit"
            ),
        ),
        (lambda data: data.pop("state"), "state.json is not a stepkit checkpoint: state: missing"),
        (
            lambda data: data.update(status="asleep"),
            (
                "state.json is not a stepkit checkpoint: status: Input should be 'running', 'paused', "
                "'interrupted' or 'finished'"
            ),
        ),
    ],
)
def test_a_newer_or_foreign_checkpoint_is_refused_with_one_line(paused, capsys, change, message):
    project, run_id, state_file = paused
    rewrite(state_file, change)
    assert main(["resume", run_id, "--project-dir", str(project), "--answer", "because"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"stepkit: error: run {run_id}: {message}"
    ]


def test_state_json_that_is_not_json_is_refused_with_one_line(paused, capsys):
    project, run_id, state_file = paused
    state_file.write_text("[1, 2]")
    assert main(["resume", run_id, "--project-dir", str(project)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        (
            f"stepkit: error: run {run_id}: its checkpoint is not the one stepkit wrote, so it is not "
            f"resumed: forged or edited: {state_file} (it has no seal)"
        )
    ]


@pytest.fixture
def counted(tmp_path: Path):
    """A run paused between two nodes that count the installed-files
    fingerprint's entries: (project, run id, its state.json)."""
    project = tmp_path / "project"
    project.mkdir()
    count = {
        "kind": "script",
        "call": "tests.support.graph_helpers:count_installed",
        "outputs": ["installed_seen"],
    }
    graph = write_graph(
        project,
        {
            "before": {**count, "next": "why"},
            "why": {"kind": "input", "question": "Why?", "key": "reason", "next": "after"},
            "after": {**count, "next": "end_success"},
        },
    )
    result = run_step(project_dir=project, graph=graph, pm=pm())
    assert result.outcome == "PAUSED"
    return project, result.run_id, Path(result.run_dir) / "state.json"


def test_the_installed_fingerprint_is_kept_apart_and_read_back_when_the_run_goes_on(counted):
    project, run_id, state_file = counted
    text = state_file.read_text()
    reference = json.loads(text)["settings"][INSTALLED_KEY]
    part = state_file.with_name(f"{INSTALLED_KEY}.json")
    # the checkpoint, saved at every node, holds the digest of the thousands of hashes, written once
    assert is_apart(reference) and reference["sealed_apart"] == part.name, reference
    assert len(json.loads(read_sealed(part))) > 100 and len(text) < 20_000
    written = part.stat().st_mtime_ns

    done = resume_run(run_id, answer="because", project_dir=project, pm=pm())

    (before, after) = done.state["installed_seen"]
    assert done.outcome == "STEP_COMPLETE" and before == after > 100, done.state
    assert json.loads(state_file.read_text())["settings"][INSTALLED_KEY] == reference
    assert part.stat().st_mtime_ns == written


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        (lambda part: part.write_text(part.read_text().replace('":"', '":"0', 1)), "its seal"),
        (lambda part: part.write_text(json.dumps(json.loads(read_sealed(part)))), "it has no"),
        # sealed, but not the part the checkpoint names: its digest differs
        (
            lambda part: write_sealed(
                part, json.dumps({**json.loads(read_sealed(part)), "/site/_pytest/reports.py": ""})
            ),
            "it is not the part the record names",
        ),
    ],
)
def test_an_edited_or_swapped_fingerprint_is_refused_as_an_edited_checkpoint_is(
    counted, capsys, tamper, why
):
    project, run_id, state_file = counted
    part = state_file.with_name(f"{INSTALLED_KEY}.json")
    tamper(part)
    assert main(["resume", run_id, "--project-dir", str(project), "--answer", "because"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(
        f"stepkit: error: run {run_id}: its checkpoint is not the one stepkit wrote, so it is not "
        f"resumed: forged or edited: {part} ({why}"
    ), line
    assert json.loads(state_file.read_text())["status"] == "paused"


def test_a_checkpoint_holding_the_fingerprint_inline_resumes(counted):
    project, run_id, state_file = counted
    part = state_file.with_name(f"{INSTALLED_KEY}.json")
    inline = json.loads(read_sealed(part))
    rewrite(state_file, lambda data: data["settings"].update({INSTALLED_KEY: inline}))
    part.unlink()  # as a stepkit that kept it inline left the run

    done = resume_run(run_id, answer="because", project_dir=project, pm=pm())

    assert done.outcome == "STEP_COMPLETE"
    assert done.state["installed_seen"] == [len(inline)] * 2
