"""A step paused by the release before typed tamper flags (checkpoint format
4: each flag a string, kept in ``tamper_flags``, ``round_flags`` and
``run_store_flags``) resumes to its sentinel, its state brought to format 5:
one list of :class:`~stepkit.records.TamperFlag`, each kind read once from
the start of its text, before the state is checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.engine.checkpoint import CHECKPOINT_FORMAT
from stepkit.protocol.state import StepState
from stepkit.workspace.seal import write_sealed
from tests.support.e2e import make_project

DELETED = "deleted test file: tests/test_calc.py"
HOOK = "git hook .git/hooks/pre-commit added during the step: undone by the harness"
GATE_HOOK = "the lint gate: git hook .git/hooks/post-checkout added during the step: undone"
STORE = "the coder touched stepkit's run store: state.json"
ODD = "a flag no release of stepkit wrote"


@pytest.mark.slow
def test_a_step_paused_in_format_4_resumes_to_step_complete(tmp_path):
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.outcome == "PAUSED", paused.stderr
    state_file = Path(paused.data["run_dir"]) / "state.json"
    data = json.loads(state_file.read_text())
    data["format_version"] = 4
    data["state"].update(
        tamper_flags=[DELETED, HOOK, STORE], round_flags=[HOOK], run_store_flags=[STORE]
    )
    write_sealed(state_file, json.dumps(data))

    done = project.resume("approve")

    assert done.outcome == "STEP_COMPLETE", done.stderr
    data = json.loads(state_file.read_text())
    assert data["format_version"] == CHECKPOINT_FORMAT == 6
    state = data["state"]
    assert "round_flags" not in state and "run_store_flags" not in state
    assert [(f["kind"], f["text"]) for f in state["tamper_flags"]] == [
        ("deleted_test", DELETED),
        ("git_internals", HOOK),
        ("run_store", STORE),
    ]


def test_a_format_4_state_gets_one_list_of_typed_flags_once():
    old = {"tamper_flags": [DELETED, GATE_HOOK], "round_flags": [GATE_HOOK, ODD]}
    state = StepState.reshaped(old, 4)
    flags = StepState(**state).tamper_flags
    assert [(f.kind, f.source, f.text) for f in flags] == [
        ("deleted_test", "the step's changes", DELETED),
        ("git_internals", "the lint gate", GATE_HOOK),
        ("legacy", "stepkit", ODD),
    ]
    assert [f.of_the_tree for f in flags] == [True, False, False]  # a legacy flag is kept
    assert "round_flags" in old  # the checkpoint read is not changed in place
    assert StepState.reshaped(state, 5) is state
