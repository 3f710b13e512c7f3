"""A step paused by the release before typed evidence (checkpoint format 3:
its gate records hold their evidence as text only) resumes to its sentinel,
its state brought to format 4: each gate's typed evidence is read once from
its text, as the judges read it then."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.engine.checkpoint import CHECKPOINT_FORMAT
from stepkit.protocol.state import StepState
from stepkit.workspace.seal import write_sealed
from tests.support.e2e import make_project

EVIDENCE = (
    "$ pytest\nexit code: 1\nfailing tests (2):\n  FAILED t.py::a - assert 0\n  ERROR t.py::b\n"
    "first error of each failure:\n  a\n    E   assert 0\nsummary: 1 failed, 1 error"
)


@pytest.mark.slow
def test_a_step_paused_in_format_3_resumes_to_step_complete(tmp_path):
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.outcome == "PAUSED", paused.stderr
    state_file = Path(paused.data["run_dir"]) / "state.json"
    data = json.loads(state_file.read_text())
    data["format_version"] = 3
    ran = [gate for gate in data["state"]["gates"] if gate.get("condensed")]
    assert ran, data["state"]["gates"]
    for gate in data["state"]["gates"]:
        gate.pop("condensed", None)
    write_sealed(state_file, json.dumps(data))

    done = project.resume("approve")

    assert done.outcome == "STEP_COMPLETE", done.stderr
    data = json.loads(state_file.read_text())
    assert data["format_version"] == CHECKPOINT_FORMAT == 6
    assert all("condensed" in gate for gate in data["state"]["gates"] if gate.get("log"))


def test_a_format_3_gate_gets_the_typed_evidence_of_its_text_once():
    gate = {"name": "tests", "status": "fail", "log": "/l/tests-1.log", "evidence": EVIDENCE}
    never_ran = {"name": "build", "status": "not_run", "evidence": "GATE NOT RUN: …"}
    old = {"gates": [gate, never_ran]}
    upgraded = StepState.upgraded(old, 3)
    condensed = upgraded["gates"][0]["condensed"]
    assert condensed["tests"] == {"t.py::a": "failed", "t.py::b": "errored"}
    assert condensed["failing"] == ["FAILED t.py::a - assert 0", "ERROR t.py::b"]
    assert condensed["errors"] == [{"heading": "a", "lines": ["E   assert 0"]}]
    assert condensed["summary"] == "1 failed, 1 error"
    assert upgraded["gates"][1]["condensed"] is None  # it never ran its command
    assert "condensed" not in old["gates"][0]  # the checkpoint read is not changed in place
    assert StepState.upgraded(old, 4) is old
    assert StepState(**upgraded).gates[0].condensed.tests == condensed["tests"]
