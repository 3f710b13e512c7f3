"""A whole step on each engine: ``stepkit run --engine E --coder anthropic
--reviewer anthropic`` runs orient, the built-in coder (plan, then edit),
the sweep, the review and the handoff on that engine, pauses at the final
approval, and a resume approves it.  Claude Code and Codex are stand-ins
replaying their recorded JSON (tests/support/fake_cli.py); ``openai`` is the
real SDK against a loopback chat-completions server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support import fake_cli
from tests.support.e2e import GOOD_MUL, HANDOFF, ORIENT, SWEEP, make_project
from tests.support.variants import first_by_default

PLAN = {"files_to_touch": ["calc.py"], "risks": ["none"], "complexity": 2, "approach": "Add mul."}
EDIT = {"status": "done", "summary": "Added calc.mul."}
REVIEW = {"review_report": "🟢 mul is correct and tested."}
#: the LLM calls of the step, in order: (node, answer)
STEP = [
    ("orient", ORIENT),
    ("coder_plan", PLAN),
    ("coder_edit", EDIT),
    ("edge_case_sweep", {**SWEEP, "needs_independent_review": True}),
    ("independent_review", REVIEW),
    ("write_handoff", HANDOFF),
]


def run_step(project, engine, env):
    args = [
        "run",
        "--project-dir",
        str(project.root),
        "--engine",
        engine,
        "--coder",
        "anthropic",
        "--reviewer",
        "anthropic",
        "--step",
        "1",
    ]
    return project.stepkit(*args, env=env)


def check_the_step(project, paused, engine_name, env):
    assert paused.code == 5, paused.stderr
    assert paused.data["pending"]["node"] == "gate_user_review"
    assert {g["name"]: g["status"] for g in paused.data["gates"]}["tests"] == "pass"
    assert (project.root / "calc.py").read_text() == GOOD_MUL
    run_dir = store_dir(project.root) / "runs" / paused.data["run_id"]
    calls = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    nodes = [
        e["node"] for e in calls if e["event"] == "llm_call" and e.get("engine") == engine_name
    ]
    # one call per node (an API engine makes one more for a tool round)
    assert [n for i, n in enumerate(nodes) if i == 0 or nodes[i - 1] != n] == [
        node for node, _ in STEP
    ]
    assert paused.data["usage"]["input_tokens"] > 0
    if engine_name == "claude":  # who paid, as the run's event log keeps it (no API key here)
        assert {e["billed_to"] for e in calls if e["event"] == "llm_call"} == {"subscription"}
    assert "Added calc.mul." in Path(paused.data["handoff_draft"]).read_text()
    done = project.resume("approve", env=env)
    assert done.outcome == "STEP_COMPLETE", done.stderr
    assert "Added calc.mul." in project.handoff(1).read_text()  # approved: in the plan repo


@pytest.mark.slow
@pytest.mark.parametrize("cli", first_by_default(["claude", "codex"]))
def test_a_step_runs_on_an_agent_cli_alone(tmp_path, cli):
    project = make_project(tmp_path, reviewer=False)
    state = tmp_path / f"{cli}-state"
    fake_cli.install(tmp_path / "bin", cli, state)
    project.allow_writes(state)  # the fake CLI's record of its calls and sessions
    actions = []
    for node, answer in STEP:
        if cli == "claude":
            result = fake_cli.recorded("claude_success.json")[0]
            lines = [{**result, "structured_output": answer, "result": json.dumps(answer)}]
        else:
            lines = fake_cli.recorded("codex_success.jsonl")
            lines[2] = {
                "type": "item.completed",
                "item": {"id": "item_0", "type": "agent_message", "text": json.dumps(answer)},
            }
        actions.append(
            {"lines": lines, **({"write": {"calc.py": GOOD_MUL}} if node == "coder_edit" else {})}
        )
    fake_cli.script(state, *actions)
    env = project.env(PATH=fake_cli.path_with(tmp_path / "bin"))

    paused = run_step(project, cli, env)
    check_the_step(project, paused, cli, env)
    calls = fake_cli.calls(state)
    assert len(calls) == len(STEP)
    if cli == "claude":
        modes = [c["argv"][c["argv"].index("--permission-mode") + 1] for c in calls]
        assert modes == ["plan", "plan", "acceptEdits", "plan", "plan", "plan"]
    else:
        sandboxes = [c["argv"][c["argv"].index("--sandbox") + 1] for c in calls]
        assert sandboxes == [
            "read-only",
            "read-only",
            "danger-full-access",  # the coder's edit: stepkit's sandbox confines it already
            "read-only",
            "read-only",
            "read-only",
        ]


def test_a_step_runs_on_an_openai_compatible_server(tmp_path):
    pytest.importorskip(
        "openai", reason="the OpenAI SDK is not installed (pip install 'stepkit[openai]')"
    )
    from tests.support.chat_api import ChatAPI

    project = make_project(tmp_path, reviewer=False)
    with ChatAPI() as chat_api:
        for node, answer in STEP:
            if node == "coder_edit":
                chat_api.reply_tool("read_file", {"path": "calc.py"})  # read before it is changed
                chat_api.reply_tool("write_file", {"path": "calc.py", "content": GOOD_MUL})
                chat_api.reply_tool("run_command", {"command": "true"})  # its tests, before "done"
            chat_api.reply_json(answer)
        env = project.env(OPENAI_BASE_URL=chat_api.base_url, OPENAI_API_KEY=chat_api.api_key)
        paused = run_step(project, "openai:llama3.2", env)
        check_the_step(project, paused, "openai", env)
    assert {r["model"] for r in chat_api.requests} == {"llama3.2"}
    assert "write_file" in {t["function"]["name"] for t in chat_api.requests[2]["tools"]}


def test_an_engine_fault_in_a_run_is_routed_as_an_llm_fault(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    state = tmp_path / "claude-state"
    fake_cli.install(tmp_path / "bin", "claude", state)
    fake_cli.script(state, {"lines": fake_cli.recorded("claude_api_error.json"), "exit": 1})
    env = project.env(PATH=fake_cli.path_with(tmp_path / "bin"))
    failed = run_step(project, "claude", env)
    assert failed.outcome == "STEP_FAILED", failed.stderr
    assert "claude CLI reported an API error 400: Prompt is too long" in failed.output
    assert len(fake_cli.calls(state)) == 1
