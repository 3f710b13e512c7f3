"""A second graph file reuses the step protocol's stages and script nodes
under node ids that all differ from the step-runner's, and runs a step end
to end through the real CLI: real git project, real gate commands, command
coder and reviewer, the scripted engine (answers keyed by the new ids).

What the Python code knows of the step-runner's node ids shows here: the
pipeline faults, the skipped review, the progress display's gate lines."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stepkit.protocol.graphs import load_protocol_graph
from tests.support.e2e import HANDOFF, ORIENT, SWEEP
from tests.support.variants import first_by_default

ENDINGS = "stepkit.protocol.nodes.endings"
#: the state keys each script function or stage sets, as the step-runner declares them
OUTPUTS = {
    getattr(node, "call", None) or node.stage: node.outputs
    for node in load_protocol_graph().nodes.values()
    if node.kind in ("script", "stage")
}
#: each script function's ``module:function``, as the step-runner names it
CALLS = {call.split(":")[1]: call for call in OUTPUTS if ":" in call}


def script(call: str, **fields):
    return {"kind": "script", "call": CALLS[call], "outputs": OUTPUTS[CALLS[call]], **fields}


def stage(name: str, **fields):
    return {"kind": "stage", "stage": name, "outputs": OUTPUTS[name], **fields}


OTHER_GRAPH = {
    "name": "renamed_runner",
    "start": "find",
    "failure_node": "failed",
    "initial_state": load_protocol_graph().initial_state,
    "append": load_protocol_graph().append,
    "nodes": {
        "find": script(
            "resolve_step",
            routes={"deps satisfied": "look", "deps unsatisfied": "failed", "error": "failed"},
        ),
        "look": stage("orient", next="staleness", fallback="fault_note"),
        "staleness": script(
            "route_staleness", routes={"major deviation": "failed", "else": "code"}
        ),
        "code": stage("implement", next="coder_says", fallback="failed", rerun_on_resume=False),
        "coder_says": script(
            "route_coder_result",
            routes={"CODER_COMPLETE": "check_fmt", "REJECTED / FAILED": "failed"},
        ),
        "check_fmt": script("verify_format_lint", routes={"pass": "check_build", "fail": "fixes"}),
        "check_build": script("verify_build", routes={"pass": "check_tests", "fail": "fixes"}),
        "check_tests": script("verify_tests", routes={"pass": "edges", "fail": "fixes"}),
        "fixes": script("fix_loop_gate", routes={"budget left": "code", "budget spent": "failed"}),
        "edges": stage("sweep", next="want_review", fallback="write"),
        "want_review": script(
            "route_sweep", routes={"5+ files or boundary": "critique", "else": "write"}
        ),
        "critique": stage("review", next="after_review", fallback="write", max_attempts=2),
        "after_review": script(
            "route_review", routes={"🔴 critical findings": "code", "else": "write"}
        ),
        "write": stage("handoff", next="validate", fallback="fault_note"),
        "fault_note": script("note_llm_fault", next="failed"),
        "validate": script(
            "check_handoff",
            routes={"schema valid": "approve", "one retry": "write", "invalid twice": "failed"},
        ),
        "approve": {
            "kind": "approval",
            "question": "Step {step} ({title}) done?\n{gates}",
            "options": ["approve", "revise"],
            "routes": {"approve": "done", "revise": "failed"},
        },
        "done": {
            "kind": "end",
            "sentinel": "STEP_COMPLETE",
            "exit_code": 0,
            "render": f"{ENDINGS}:render_success",
        },
        "failed": {
            "kind": "end",
            "sentinel": "STEP_FAILED",
            "exit_code": 1,
            "render": f"{ENDINGS}:render_failure",
        },
    },
}


@pytest.fixture
def project(project, tmp_path):
    graph = tmp_path / "renamed.yaml"
    graph.write_text(yaml.safe_dump(OTHER_GRAPH, allow_unicode=True, sort_keys=False))
    project.graph = graph
    return project


def test_the_node_ids_differ_from_the_step_runners():
    assert not set(OTHER_GRAPH["nodes"]) & set(load_protocol_graph().nodes)


@pytest.mark.slow
def test_a_step_runs_end_to_end_through_the_other_graph(project):
    engine = project.script(
        look=ORIENT, edges={**SWEEP, "needs_independent_review": True}, write=HANDOFF
    )
    paused = project.run("--graph", str(project.graph), "--verbose", engine=engine, json_out=False)
    assert paused.code == 5, paused.stderr
    progress = paused.stderr
    assert (
        "check_tests → edges" in progress and "gate tests: PASS" in progress
    )  # gates shown, by any node id
    assert (project.state_dir / "reviewer_calls").read_text() == "1"
    assert not project.handoff(1).is_file()  # a draft in the run dir until approved

    done = project.resume("approve")
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr
    assert done.output.splitlines()[0] == "STEP_COMPLETE" and "- tests: PASS" in done.output
    assert project.plan_status(1) == "complete"
    assert "calc functions take two numbers" in (project.plans / "NOTES.md").read_text()
    assert "PIPELINE-FAULT" not in project.handoff(1).read_text()
    assert ("approve", "done", "approve") in project.edges


@pytest.mark.slow
@pytest.mark.parametrize(
    ("faulty", "flag"),
    first_by_default(
        [
            ("sweep", "PIPELINE-FAULT: edge-case sweep did not run"),
            ("review", "PIPELINE-FAULT: independent review did not run"),
        ],
        several=True,
    ),
)
def test_a_faulted_sweep_or_review_is_flagged_whatever_its_node_id(project, faulty, flag):
    sweep = (
        {"fault": "engine overloaded"}
        if faulty == "sweep"
        else {**SWEEP, "needs_independent_review": True}
    )
    if faulty == "review":
        project.reviewer_reports("CRASH")
    engine = project.script(look=ORIENT, edges=sweep, write=HANDOFF)
    paused = project.run("--graph", str(project.graph), engine=engine)
    assert paused.code == 5 and paused.data["pending"]["node"] == "approve", paused.stderr
    assert flag in Path(paused.data["handoff_draft"]).read_text()
    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE" and flag in done.output


@pytest.mark.slow
def test_step_skip_review_skips_the_review_node_whatever_its_id(project):
    engine = project.script(
        look=ORIENT, edges={**SWEEP, "needs_independent_review": True}, write=HANDOFF
    )
    paused = project.run(
        "--graph", str(project.graph), engine=engine, env=project.env(STEP_SKIP_REVIEW="1")
    )
    assert paused.data["pending"]["node"] == "approve", paused.stderr
    assert not (project.state_dir / "reviewer_calls").exists()


def test_its_final_approval_node_cannot_be_pre_answered(project):
    refused = project.run(
        "--graph", str(project.graph), "--answer", "approve=approve", json_out=False
    )
    assert refused.code == 2
    assert (
        "the final approval gate can only be answered after its question is shown" in refused.stderr
    )
