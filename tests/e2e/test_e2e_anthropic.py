"""End to end on the real Anthropic SDK: ``stepkit run --engine anthropic``
as a real process, talking to the loopback Messages API of this process.

Real files, a real git repo, real gate commands; only the API is scripted.
Covers the happy path with a tool call, a 529 that never ends, a per-run
token budget, the built-in coder (tool edits, refused writes, one test run
per step unless evidence reuse is switched off) and the built-in reviewer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, HANDOFF, ORIENT
from tests.support.sdk_e2e import (
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

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

pytest_plugins = ["tests.support.messages_api"]


def run_events(project, result):
    log = store_dir(project.root) / "runs" / result.data["run_id"] / "events.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


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
    # prompt caching: the tool loop's growing history, the plan, and the read-only
    # tools, which reach the default model's 512-token minimum and which the sweep
    # reads back; the system alone is no breakpoint (the plan's covers it)
    orient, sweep = api.requests[0].body, api.requests[2].body
    plan = orient["messages"][0]["content"][0]
    assert "Add mul" in plan["text"] and plan["cache_control"] == {"type": "ephemeral"}
    assert orient["cache_control"] == {"type": "ephemeral"}
    assert orient["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sweep["tools"] == orient["tools"]
    assert "cache_control" not in orient["system"][0]
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
    result = run_sdk(
        project, api, "--set", "llm_max_retries=1", "--set", "llm_max_retry_wait_s=0.05"
    )
    assert result.code == 1 and result.outcome == "STEP_FAILED", result.stderr + result.stdout
    fault = next(line for line in result.output.splitlines() if line.startswith("Pipeline fault:"))
    assert "529" in fault and "overloaded_error" in fault and "2 attempt(s)" in fault
    assert "Traceback" not in result.stdout + result.stderr
    assert nodes(api) == ["orient", "orient"]  # one retry, then the fault
    assert project.coder_calls() == 0
    stored = [p for p in store_dir(project.root).rglob("*") if p.is_file()]
    assert stored
    for path in stored:
        assert api.api_key.encode() not in path.read_bytes(), path


def test_the_budget_is_per_run_and_stops_the_sweep_before_its_request(project, messages_api):
    api = messages_api
    served = [
        {
            "input_tokens": 9000,
            "output_tokens": 600,
            "cache_creation_input_tokens": 300,
            "cache_read_input_tokens": 100,
        }
    ]
    api.reply_json(ORIENT, usage=served[0])
    # orient's own request fits in 10000 tokens; after its 10000 the sweep's cannot
    result = run_sdk(project, api, "--set", "max_tokens=10000")
    assert nodes(api) == ["orient"]  # no sweep or handoff request was ever sent
    assert result.code == 1 and result.outcome == "STEP_FAILED", result.stderr + result.stdout
    assert "budget exceeded" in result.output and "max_tokens=10000" in result.output
    assert project.coder_calls() == 1  # the step ran up to the sweep
    faults = {
        e["node"]: e["error"] for e in run_events(project, result) if e["event"] == "node_fault"
    }
    assert "budget exceeded: the run has used 10000 tokens" in faults["edge_case_sweep"]
    usage = result.data["usage"]
    assert {k: v for k, v in usage.items() if k != "cost_usd"} == token_sum(served).model_dump(
        exclude={"cost_usd"}
    )
    calls = [e for e in run_events(project, result) if e["event"] == "llm_call"]
    assert len(calls) == 1 and usage["cost_usd"] == calls[0]["cost_usd"] > 0


def builtin_run(project, api, counter_cmd):
    """A run with --coder anthropic: orient, the coder's plan and tool edits,
    the sweep and the handoff, all through the SDK; pauses at the final gate."""
    api.reply_json(ORIENT)
    builtin_edit(api)
    api.reply_json(NO_SWEEP_ANNOTATIONS)
    api.reply_json(HANDOFF)
    return run_sdk(project, api, coder="anthropic", env=sdk_env(project, api, TEST_CMD=counter_cmd))


def test_builtin_coder_edits_with_tools_and_the_step_reuses_its_test_run(project, messages_api):
    api = messages_api
    command, counter = counted_tests(project)
    result = builtin_run(project, api, command)
    assert result.code == 5 and result.data["pending"]["node"] == "gate_user_review", (
        result.stderr + result.stdout
    )
    assert nodes(api) == [
        "orient",
        "coder_plan",
        "coder_plan",
        "coder_edit",
        "coder_edit",
        "coder_edit",
        "coder_edit",
        "edge_case_sweep",
        "write_handoff",
    ]
    assert (project.root / "calc.py").read_text() == GOOD_MUL
    wrote, edited = [r["content"] for i in (4, 5) for r in api.tool_results(i)]
    assert wrote == "wrote 66 bytes to calc.py"
    assert edited.startswith("edited calc.py; lines 6–6 now read:\n") and edited.endswith(
        "     6\t    return a * b"
    )
    events = run_events(project, result)
    assert [(e["name"], e["status"]) for e in events if e["event"] == "coder_gate"] == [
        ("format", "not_run"),
        ("lint", "pass"),
        ("build", "pass"),
        ("tests", "pass"),
    ]

    assert runs_of(counter) == 1  # the coder's own run; the step-level gate reused it
    tests = next(g for g in result.data["gates"] if g["name"] == "tests")
    assert tests["status"] == "pass" and tests["command"] == command
    assert re.match(
        r"\[reused: same tree [0-9a-f]{12}, run at \S+ by the coder's own gate\]\n",
        tests["evidence"],
    )
    assert "2 passed in 0.01s" in tests["evidence"]
    draft = Path(result.data["handoff_draft"]).read_text()  # approved, it goes to plans/
    assert "[reused: same tree" in draft.split("### tests", 1)[1]


def test_without_evidence_reuse_the_step_runs_the_tests_again(project, messages_api):
    config = project.root / "stepkit.toml"
    config.write_text("reuse_coder_evidence = false\n" + config.read_text())
    command, counter = counted_tests(project)
    result = builtin_run(project, messages_api, command)
    assert result.code == 5, result.stderr + result.stdout
    assert runs_of(counter) == 2
    tests = next(g for g in result.data["gates"] if g["name"] == "tests")
    assert tests["status"] == "pass" and "reused" not in tests["evidence"]


def test_builtin_coder_writes_into_the_plan_repo_or_outside_are_refused(
    project, messages_api, tmp_path
):
    api = messages_api
    plan = project.plans / "steps" / "02-div.md"
    original = plan.read_bytes()
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    api.reply_json(ORIENT)
    api.reply_json(
        {"files_to_touch": ["calc.py"], "risks": [], "complexity": 1, "approach": "Add mul."}
    )
    api.reply_tool("write_file", {"path": "plans/steps/02-div.md", "content": "rewritten"})
    api.reply_tool(
        "edit_file", {"path": "../outside.txt", "old_text": "not yours", "new_text": "mine"}
    )
    api.reply_tool("read_file", {"path": "calc.py"})
    api.reply_tool("write_file", {"path": "calc.py", "content": GOOD_MUL})
    api.reply_tool("run_command", {"command": "true"})  # it runs its tests before answering
    api.reply_json({"status": "done", "summary": "Added calc.mul."})
    api.reply_json(NO_SWEEP_ANNOTATIONS)
    api.reply_json(HANDOFF)
    result = run_sdk(project, api, coder="anthropic")
    assert result.code == 5 and result.data["pending"]["node"] == "gate_user_review", (
        result.stderr + result.stdout
    )

    refused = [api.tool_results(i)[0] for i in (3, 4)]
    assert all(r["is_error"] for r in refused)
    assert "plans/steps/02-div.md: writing under plans/ is not allowed" in refused[0]["content"]
    assert "../outside.txt: outside the project directory (refused)" in refused[1]["content"]
    assert plan.read_bytes() == original
    assert outside.read_text() == "not yours\n"
    assert (project.root / "calc.py").read_text() == GOOD_MUL  # the allowed write went through


def five_files(extra=""):
    files = {"calc.py": GOOD_MUL}
    files.update({f"helpers/h{i}.py": f"X = {i}{extra}\n" for i in range(4)})
    return {"write": files, "sentinel": "CODER_COMPLETE"}


def test_builtin_reviewer_sends_a_critical_finding_back_then_passes(project, messages_api):
    api = messages_api
    project.coder_actions(five_files(), five_files(" + 0"))
    api.reply_json(ORIENT)
    api.reply_json(NO_SWEEP_ANNOTATIONS)
    api.reply_json({"review_report": "🔴 calc.py: mul ignores floats\n🟡 helpers/h0.py: naming"})
    api.reply_json(NO_SWEEP_ANNOTATIONS)
    api.reply_json({"review_report": "🟢 helpers/h1.py: a nit"})
    api.reply_json(HANDOFF)
    result = run_sdk(project, api, "--reviewer", "anthropic")
    assert result.code == 5 and result.data["pending"]["node"] == "gate_user_review", (
        result.stderr + result.stdout
    )
    assert nodes(api) == [
        "orient",
        "edge_case_sweep",
        "independent_review",
        "edge_case_sweep",
        "independent_review",
        "write_handoff",
    ]
    assert not (
        project.state_dir / "reviewer_calls"
    ).exists()  # the configured command reviewer was overridden

    review = api.requests[2].body
    assert {t["name"] for t in review["tools"]} == {
        "read_file",
        "list_dir",
        "search",
        "run_command",
    }
    plan, material = (block["text"] for block in review["messages"][0]["content"])
    assert "`python check.py` passes." in plan and "`python check.py` passes." in material
    assert all(f"helpers/h{i}.py" in material for i in range(4))  # the changed files and the diff
    assert project.coder_calls() == 2
    fix_prompt = project.coder_prompt(1)
    assert "mul ignores floats" in fix_prompt and "naming" not in fix_prompt
    assert (
        "Coder rounds (fix attempts used: 0 of 2):" in result.data["pending"]["question"]
    )  # a review round is not a fix attempt


def test_a_run_paused_inside_a_node_counts_each_call_once(project, messages_api):
    api = messages_api
    api.reply_json(ORIENT)
    api.reply_json(
        {"files_to_touch": ["calc.py"], "risks": ["wide"], "complexity": 8, "approach": "Add mul."}
    )
    paused = run_sdk(project, api, coder="anthropic")
    assert paused.code == 5 and paused.data["pending"]["node"] == "coder_plan_approval", (
        paused.stderr + paused.stdout
    )
    assert paused.data["usage"]["input_tokens"] == 200  # orient and the plan, kept across the pause

    api.reply_tool("read_file", {"path": "calc.py"})
    api.reply_tool("write_file", {"path": "calc.py", "content": GOOD_MUL})
    api.reply_tool("run_command", {"command": "true"})
    api.reply_json({"status": "done", "summary": "Added calc.mul."})
    api.reply_json(NO_SWEEP_ANNOTATIONS)
    api.reply_json(HANDOFF)
    resumed = project.resume("yes", env=sdk_env(project, api))
    assert resumed.data["pending"]["node"] == "gate_user_review", resumed.stderr + resumed.stdout
    assert nodes(api) == [
        "orient",
        "coder_plan",
        *["coder_edit"] * 4,
        "edge_case_sweep",
        "write_handoff",
    ]
    assert resumed.data["usage"]["input_tokens"] == 100 * len(api.requests)
    assert resumed.data["usage"]["output_tokens"] == 20 * len(api.requests)
