"""End to end on the real Anthropic SDK: ``stepkit run --engine anthropic``
as a real process, talking to the loopback Messages API of this process.

Real files, a real git repo, real gate commands; only the API is scripted.
Covers the happy path with a tool call, a 529 that never ends, a per-run
token budget, the built-in coder (tool edits, refused writes, one test run
per step unless evidence reuse is switched off) and the built-in reviewer.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e_support import GOOD_MUL, ORIENT, make_project
from tests.sdk_e2e_support import (
    NO_SWEEP_ANNOTATIONS,
    builtin_edit,
    counted_tests,
    nodes,
    queue_stages,
    run_sdk,
    runs_of,
    sdk_env,
    token_sum,
)

pytest_plugins = ["tests.messages_api"]


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path)


def test_happy_path_with_a_tool_call_pauses_then_completes(project, messages_api):
    api = messages_api
    api.reply_tool("read_file", {"path": "calc.py"})
    queue_stages(api)
    paused = run_sdk(project, api)
    assert paused.code == 5, paused.stderr + paused.stdout
    assert paused.data["pending"]["node"] == "gate_user_review"
    assert nodes(api) == ["orient", "orient", "edge_case_sweep", "write_handoff"]

    # the tool ran and its output went back to the model
    result = api.tool_results(1)[0]
    assert "def add(a, b):" in result["content"] and not result.get("is_error")
    # prompt caching: the system prompt, the last tool, the stable prefix, and the request
    orient = api.requests[0].body
    assert orient["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert orient["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert orient["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "Add mul" in orient["messages"][0]["content"][0]["text"]
    assert orient["cache_control"] == {"type": "ephemeral"}
    usage = paused.data["usage"]
    assert usage["input_tokens"] == 400 and usage["output_tokens"] == 80 and usage["cost_usd"] > 0

    done = project.resume("approve", env=sdk_env(project, api))
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
    assert done.output.splitlines()[0] == "STEP_COMPLETE"
    assert done.data["usage"] == usage
    assert project.plan_status(1) == "complete"
    handoff = project.handoff(1).read_text()
    assert "result: complete" in handoff and "Added calc.mul." in handoff
    assert "check.py" in handoff.split("## Evidence", 1)[1]
    notes = (project.plans / "NOTES.md").read_text()
    assert notes.startswith("# Notes\n\n- calc is a tiny module.\n")
    assert "calc functions take two numbers" in notes
    assert len(api.requests) == 4  # approving asks the model nothing


def test_529_forever_fails_with_a_pipeline_fault_and_no_key_on_disk(project, messages_api):
    api = messages_api
    api.error(529, "overloaded_error", "Overloaded", always=True)
    result = run_sdk(project, api, "--set", "llm_max_retries=1", "--set", "llm_max_retry_wait_s=0.05")
    assert result.code == 1 and result.outcome == "STEP_FAILED", result.stderr + result.stdout
    fault = next(line for line in result.output.splitlines() if line.startswith("Pipeline fault:"))
    assert "529" in fault and "overloaded_error" in fault and "2 attempt(s)" in fault
    assert "Traceback" not in result.stdout + result.stderr
    assert nodes(api) == ["orient", "orient"]  # one retry, then the fault
    assert project.coder_calls() == 0
    stored = [p for p in (project.root / ".stepkit").rglob("*") if p.is_file()]
    assert stored
    for path in stored:
        assert api.api_key.encode() not in path.read_bytes(), path


def test_the_budget_is_per_run_and_stops_the_sweep_before_its_request(project, messages_api):
    api = messages_api
    served = [{"input_tokens": 9000, "output_tokens": 600, "cache_creation_input_tokens": 300,
               "cache_read_input_tokens": 100}]
    api.reply_json(ORIENT, usage=served[0])
    # orient's own request fits in 10000 tokens; after its 10000 the sweep's cannot
    result = run_sdk(project, api, "--set", "max_tokens=10000")
    assert nodes(api) == ["orient"]  # no sweep or handoff request was ever sent
    assert result.code == 1 and result.outcome == "STEP_FAILED", result.stderr + result.stdout
    assert "budget exceeded" in result.output and "max_tokens=10000" in result.output
    assert project.coder_calls() == 1  # the step ran up to the sweep
    log = project.root / ".stepkit" / "runs" / result.data["run_id"] / "events.jsonl"
    faults = {e["node"]: e["error"] for e in map(json.loads, log.read_text().splitlines())
              if e["event"] == "node_fault"}
    assert "budget exceeded: the run has used 10000 tokens" in faults["edge_case_sweep"]
    usage = result.data["usage"]
    assert {k: v for k, v in usage.items() if k != "cost_usd"} == token_sum(served).model_dump(exclude={"cost_usd"})
    assert usage["cost_usd"] > 0
