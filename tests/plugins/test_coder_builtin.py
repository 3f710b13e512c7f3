"""The built-in coder through the real SDK against the loopback Messages API,
with the real gate runner on a tiny project (BUILD_CMD / TEST_CMD)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from stepkit.pluginmanager import get_plugin_manager
from stepkit.plugins.coders.anthropic import stepkit_implement
from stepkit.protocol.switches import read_switches
from stepkit.records import Paused, Question
from stepkit.workspace import scope
from tests.support.coder import make_ctx
from tests.support.gitrepo import init_repo
from tests.support.variants import first_by_default

pytest_plugins = ["tests.support.messages_api"]

FAST = {"llm_max_retry_wait_s": 2, "llm_timeout_s": 10}
PLAN_FILE = "plans/steps/03-add-greeting.md"
PLAN_BYTES = "---\nstep: 3\ntitle: Add greeting\n---\n## Acceptance criteria\n- greet\n"
CHECK = (
    "from greet import greet\n"
    "value = greet('Ann')\n"
    "assert value == 'Hello, Ann!', f'greet returned {value!r}'\n"
    "print('1 passed in 0.01s')\n"
)
GOOD = "def greet(name):\n    return f'Hello, {name}!'\n"
PLAN = {
    "files_to_touch": ["greet.py"],
    "risks": ["none"],
    "complexity": 3,
    "approach": "write greet() in greet.py",
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = init_repo(
        tmp_path / "project",
        {"check_greet.py": CHECK, PLAN_FILE: PLAN_BYTES, ".gitignore": "__pycache__/\n"},
    )
    monkeypatch.setenv("BUILD_CMD", f"{sys.executable} -m py_compile greet.py")
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} check_greet.py")
    monkeypatch.delenv("CODER_AUTOAPPROVE", raising=False)
    return root


def ctx_for(project: Path, **kwargs):
    return make_ctx(
        project,
        coder="anthropic",
        pm=get_plugin_manager(project),
        settings={**FAST, **kwargs.pop("settings", {})},
        **kwargs,
    )


def greet_returning(value: str) -> str:
    return f"def greet(name):\n    return {value!r}\n"


def queue_edit(api, *writes: tuple[str, str], summary: str = "wrote greet()") -> list[str]:
    """The model's edit round: its writes, a test run, then "done"."""
    ids = [api.reply_tool("write_file", {"path": path, "content": text}) for path, text in writes]
    api.reply_tool("run_command", {"command": f"{sys.executable} check_greet.py"})
    api.reply_json({"status": "done", "summary": summary})
    return ids


def tool_result(api, tool_id: str) -> dict:
    for request in api.requests:
        for message in request.body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result" and block["tool_use_id"] == tool_id:
                    return block
    raise AssertionError(f"no tool_result for {tool_id}")


def tool_names(request) -> list[str]:
    return [tool["name"] for tool in request.body.get("tools", [])]


def test_a_scripted_edit_that_passes(project, messages_api):
    messages_api.reply_tool("list_dir", {"path": "."})
    messages_api.reply_json(PLAN)
    queue_edit(messages_api, ("greet.py", GOOD))

    result = stepkit_implement(ctx_for(project))

    assert result.sentinel == "CODER_COMPLETE"
    assert not result.crashed
    assert result.changed_files == ["greet.py"]
    # every gate the step runs, as the step runs them (this project has no formatter or linter)
    assert [(g.name, g.status) for g in result.gates] == [
        ("format", "not_run"),
        ("lint", "not_run"),
        ("build", "pass"),
        ("tests", "pass"),
    ]
    ran = [g for g in result.gates if g.ran]
    assert all(g.tree_hash == scope.tree_hash(project) for g in ran)
    assert all(g.started_at for g in ran)
    assert "Changed files: greet.py" in result.text
    assert result.text.splitlines()[-1] == "CODER_COMPLETE"
    assert (project / "greet.py").read_text() == GOOD
    plan_request, edit_request = messages_api.requests[0], messages_api.requests[2]
    # one conversation: the same instructions and tool definitions in every round
    assert tool_names(plan_request) == [
        "read_file",
        "list_dir",
        "search",
        "run_command",
        "write_file",
        "edit_file",
    ]
    assert plan_request.body["tools"] == edit_request.body["tools"]
    assert plan_request.body["system"] == edit_request.body["system"]
    assert plan_request.body["output_config"] == edit_request.body["output_config"]
    assert "Acceptance criteria" in plan_request.raw.decode()
    assert "CODER_COMPLETE" not in plan_request.raw.decode()  # it answers in fields, not a sentinel
    assert result.cost_usd is not None and result.cost_usd > 0


def test_the_report_names_what_the_last_gate_left(project, messages_api, monkeypatch):
    # the test writes a report and says what it ran (a silent exit 0 would be no test run)
    monkeypatch.setenv(
        "TEST_CMD", f"{sys.executable} check_greet.py > report.txt && echo 1 passed in 0.01s"
    )
    messages_api.reply_json(PLAN)
    queue_edit(messages_api, ("greet.py", GOOD))

    result = stepkit_implement(ctx_for(project))

    assert result.sentinel == "CODER_COMPLETE"
    assert result.changed_files == ["greet.py", "report.txt"]
    _format, _lint, build, tests = result.gates
    assert tests.tree_hash == scope.tree_hash(project) != build.tree_hash


def test_a_failure_then_a_fix(project, messages_api):
    messages_api.reply_json(PLAN)
    queue_edit(messages_api, ("greet.py", greet_returning("Hi Ann")))
    queue_edit(messages_api, ("greet.py", GOOD), summary="fixed the greeting")

    result = stepkit_implement(ctx_for(project))

    assert result.sentinel == "CODER_COMPLETE"
    assert "Fix attempts: 1 of 3" in result.text
    fix_request = messages_api.requests[4]
    fix_prompt = fix_request.body["messages"][-1]["content"][-1]["text"]
    assert "The tests gate failed after your change (fix attempt 1 of 3)" in fix_prompt
    assert "greet returned 'Hi Ann'" in fix_prompt
    assert "minimal fix" in fix_prompt
    # the fix round holds the earlier turns: the plan, the edit that failed, its test run
    earlier = json.dumps(fix_request.body["messages"][:-1])
    assert "write greet() in greet.py" in earlier  # the plan's answer
    assert "Hi Ann" in earlier and "run_command" in earlier
    assert fix_request.body["cache_control"] == {"type": "ephemeral"}


def test_never_passing_fails_after_the_budget(project, messages_api):
    messages_api.reply_json(PLAN)
    for n in range(4):  # the first edit and three fixes, each failing differently
        queue_edit(messages_api, ("greet.py", greet_returning(f"attempt {n}")))

    result = stepkit_implement(ctx_for(project))

    assert result.sentinel == "CODER_FAILED"
    assert not result.crashed
    assert (
        "fix budget spent: 3 of 3 fix attempts used and the tests gate still fails" in result.text
    )
    assert "greet returned 'attempt 3'" in result.text
    assert [(g.name, g.status) for g in result.gates if g.ran] == [
        ("build", "pass"),
        ("tests", "fail"),
    ]
    assert len(messages_api.requests) == 1 + 4 * 3  # plan; each round: write, test run, answer


def test_the_same_failure_after_a_fix_stops_at_once_with_no_progress(project, messages_api):
    messages_api.reply_json(PLAN)
    queue_edit(messages_api, ("greet.py", greet_returning("Hi Ann")))
    queue_edit(messages_api, ("greet.py", greet_returning("Hi Ann")), summary="tried again")

    result = stepkit_implement(ctx_for(project))

    assert result.sentinel == "CODER_FAILED"
    assert "no progress: the tests gate failed the same way after fix attempt 1" in result.text
    assert len(messages_api.requests) == 1 + 2 * 3


def test_writes_outside_the_project_and_into_the_plan_repo_are_refused(project, messages_api):
    outside = project.parent / "outside.txt"
    messages_api.reply_json(PLAN)
    escape, plan_edit, good = queue_edit(
        messages_api, ("../outside.txt", "x"), (PLAN_FILE, "status: complete\n"), ("greet.py", GOOD)
    )

    result = stepkit_implement(ctx_for(project))

    for tool_id in (escape, plan_edit):
        block = tool_result(messages_api, tool_id)
        assert block.get("is_error") is True
        assert block["content"].startswith("error:")
    assert "outside the project" in tool_result(messages_api, escape)["content"]
    assert not tool_result(messages_api, good).get("is_error")
    assert not outside.exists()
    assert (project / PLAN_FILE).read_text() == PLAN_BYTES
    assert result.sentinel == "CODER_COMPLETE"
    assert result.changed_files == ["greet.py"]


def test_a_complex_plan_asks_and_no_rejects(project, messages_api):
    asked: list[Question] = []
    messages_api.reply_json({**PLAN, "complexity": 8, "risks": ["touches the public API"]})

    def ask(question: Question) -> str:
        asked.append(question)
        return "no"

    result = stepkit_implement(ctx_for(project, ask=ask))

    assert result.sentinel == "CODER_REJECTED"
    assert [(q.node, q.kind, q.options) for q in asked] == [
        ("coder_plan_approval", "approval", ["yes", "no"])
    ]
    assert "complexity 8/10" in asked[0].text and "touches the public API" in asked[0].text
    assert "not approved" in result.text
    assert len(messages_api.requests) == 1  # no edit round
    assert result.changed_files == []


def test_a_paused_approval_resumes_with_the_same_plan(project, messages_api):
    messages_api.reply_json({**PLAN, "complexity": 9})

    def pause(question: Question) -> str:
        raise Paused(question)

    with pytest.raises(Paused):
        stepkit_implement(ctx_for(project, ask=pause))
    queue_edit(messages_api, ("greet.py", GOOD))

    result = stepkit_implement(ctx_for(project, ask=lambda question: "yes"))

    assert result.sentinel == "CODER_COMPLETE"
    assert len(messages_api.requests) == 1 + 3  # the plan was not asked for again


def test_coder_autoapprove_skips_the_gate(project, messages_api):
    """CODER_AUTOAPPROVE=1 as the run started it (settings["switches"])."""
    messages_api.reply_json({**PLAN, "complexity": 10})
    queue_edit(messages_api, ("greet.py", GOOD))

    def ask(question: Question) -> str:
        raise AssertionError("must not ask")

    switches = {"switches": read_switches({"CODER_AUTOAPPROVE": "1"})}
    assert (
        stepkit_implement(ctx_for(project, ask=ask, settings=switches)).sentinel == "CODER_COMPLETE"
    )


def test_coder_autoapprove_set_after_the_run_started_does_not_skip_the_gate(
    project, messages_api, monkeypatch
):
    """A resumed run keeps the switches it started with, whatever the resuming shell sets."""
    monkeypatch.setenv("CODER_AUTOAPPROVE", "1")
    messages_api.reply_json({**PLAN, "complexity": 10})
    queue_edit(messages_api, ("greet.py", GOOD))
    asked = []

    def ask(question: Question) -> str:
        asked.append(question.node)
        return "yes"

    switches = {"switches": read_switches({})}
    assert (
        stepkit_implement(ctx_for(project, ask=ask, settings=switches)).sentinel == "CODER_COMPLETE"
    )
    assert asked


def test_a_model_fault_is_a_crash_with_the_reason_last(project, messages_api):
    messages_api.reply_json(PLAN)
    messages_api.reply_tool("write_file", {"path": "greet.py", "content": GOOD})
    # nothing more queued: the loopback answers 400, which is not retried

    result = stepkit_implement(ctx_for(project))

    assert result.crashed
    assert result.sentinel is None
    assert result.changed_files == ["greet.py"]
    assert result.text.splitlines()[-1].startswith(
        "the built-in coder crashed: its model call failed"
    )


def test_other_coder_specs_are_not_its_business(project):
    assert stepkit_implement(make_ctx(project, coder="command:true")) is None
    assert stepkit_implement(make_ctx(project, coder="claude")) is None


def test_a_done_without_a_test_run_after_the_last_edit_is_sent_back_once(project, messages_api):
    messages_api.reply_json(PLAN)
    messages_api.reply_tool("write_file", {"path": "greet.py", "content": GOOD})
    messages_api.reply_json({"status": "done", "summary": "wrote greet()"})
    messages_api.reply_tool("run_command", {"command": f"{sys.executable} check_greet.py"})
    messages_api.reply_json({"status": "done", "summary": "wrote and tested greet()"})

    result = stepkit_implement(ctx_for(project))

    assert result.sentinel == "CODER_COMPLETE" and "wrote and tested greet()" in result.text
    sent_back = messages_api.requests[3].body["messages"][-1]["content"][-1]["text"]
    assert sent_back.startswith("You changed files after your last test run")
    assert "1 passed" in messages_api.tool_results(4)[0]["content"]


def test_the_coder_can_answer_failed_with_its_reason(project, messages_api):
    messages_api.reply_json(PLAN)
    messages_api.reply_json({"status": "failed", "summary": "greet needs a locale table we lack"})

    result = stepkit_implement(ctx_for(project))

    assert result.sentinel == "CODER_FAILED" and not result.crashed
    assert "the coder could not make it work: greet needs a locale table we lack" in result.text
    assert result.gates == []  # nothing to verify


def test_writes_are_refused_while_planning(project, messages_api):
    tool_id = messages_api.reply_tool("write_file", {"path": "greet.py", "content": GOOD})
    messages_api.reply_json(PLAN)
    queue_edit(messages_api, ("greet.py", GOOD))

    stepkit_implement(ctx_for(project))

    block = tool_result(messages_api, tool_id)
    assert block["is_error"] and "not while planning" in block["content"]


def test_when_its_turns_run_out_the_coder_is_asked_for_its_answer_without_tools(
    project, messages_api
):
    messages_api.reply_json(PLAN)
    messages_api.reply_tool("write_file", {"path": "greet.py", "content": GOOD})
    messages_api.reply_tool("run_command", {"command": f"{sys.executable} check_greet.py"})
    messages_api.reply_json({"status": "done", "summary": "wrote greet(), out of turns"})

    result = stepkit_implement(ctx_for(project, settings={"coder_max_turns": 2}))

    assert result.sentinel == "CODER_COMPLETE"
    final = messages_api.requests[-1].body
    assert final["tool_choice"] == {"type": "none"}
    assert "Answer now, without tools" in final["messages"][-1]["content"][-1]["text"]


@pytest.mark.parametrize(
    "fix",
    first_by_default(
        [
            "The lint gate failed after your change.\n$ ruff check\nE501 line too long",
            "Fix these critical review findings (and nothing else):\n🔴 critical: greet.py: x",
        ]
    ),
)
def test_a_later_implement_round_of_the_step_continues_the_conversation(project, messages_api, fix):
    messages_api.reply_json(PLAN)
    queue_edit(messages_api, ("greet.py", greet_returning("Hi Ann")), summary="first try")
    queue_edit(messages_api, ("greet.py", GOOD), summary="fixed")
    stepkit_implement(ctx_for(project))
    first_round = len(messages_api.requests)
    (project / "greet.py").write_text(GOOD.replace("    return", "    # formatted\n    return"))
    queue_edit(
        messages_api, ("greet.py", GOOD), summary="lint fixed"
    )  # no plan: straight to the fix

    result = stepkit_implement(ctx_for(project, state={"fix_instructions": fix}))

    assert result.sentinel == "CODER_COMPLETE" and "Built-in coder: lint fixed" in result.text
    fix_request = messages_api.requests[first_round].body["messages"]
    assert "first try" in json.dumps(fix_request)  # the earlier round's turns are there
    opening = fix_request[-1]["content"][-1]["text"]
    assert opening.startswith("A new implement round of this step")
    assert fix in opening and "Make the fix now" in opening
    assert "Plan the change now" not in opening and "Your plan:" not in opening
    assert "since your last round" in opening and "+    # formatted" in opening  # the diff since
    openings = [
        m["content"][-1]["text"]
        for m in fix_request
        if m["role"] == "user"
        and isinstance(m["content"], list)
        and m["content"][-1].get("type") == "text"
    ]
    assert sum("Plan the change now" in text for text in openings) == 1  # the plan round, once


def test_a_conversation_kept_by_an_earlier_release_is_continued(project, messages_api):
    """A run paused before the conversation file kept the CLI session and
    what was read (it held the messages alone) continues that conversation."""
    messages_api.reply_json(PLAN)
    queue_edit(messages_api, ("greet.py", GOOD), summary="first round")
    ctx = ctx_for(project)
    stepkit_implement(ctx)
    kept = ctx.run_dir / "coder_thread-3.json"
    kept.write_text(json.dumps(json.loads(kept.read_text())["messages"]))  # the earlier format
    first_round = len(messages_api.requests)
    queue_edit(messages_api, ("greet.py", GOOD), summary="lint fixed")

    result = stepkit_implement(
        ctx_for(project, state={"fix_instructions": "The lint gate failed."})
    )

    assert result.sentinel == "CODER_COMPLETE"
    assert "first round" in json.dumps(messages_api.requests[first_round].body["messages"])


def test_edit_file_results_carry_what_the_model_needs_to_recover(project, messages_api):
    (project / "greet.py").write_text("def greet(name):\n    return 'Hi'\n")
    messages_api.reply_json(PLAN)
    read = messages_api.reply_tool("read_file", {"path": "greet.py"})

    def change_behind_its_back(body):  # once the model has read greet.py, it changes on disk
        if (
            read in json.dumps(body["messages"][-1])
            and "Hi!" not in (project / "greet.py").read_text()
        ):
            (project / "greet.py").write_text("def greet(name):\n    return 'Hi!'\n")

    messages_api.responder = change_behind_its_back
    stale = messages_api.reply_tool(
        "edit_file", {"path": "greet.py", "old_text": "'Hi!'", "new_text": "f'Hello, {name}!'"}
    )
    messages_api.reply_tool("read_file", {"path": "greet.py"})
    miss = messages_api.reply_tool(
        "edit_file",
        {"path": "greet.py", "old_text": "return 'Hi'\n", "new_text": "return f'Hello, {name}!'\n"},
    )
    hit = messages_api.reply_tool(
        "edit_file",
        {"path": "greet.py", "old_text": "return 'Hi!'", "new_text": "return f'Hello, {name}!'"},
    )
    queue_edit(messages_api)

    result = stepkit_implement(ctx_for(project))

    assert result.sentinel == "CODER_COMPLETE"
    assert tool_result(messages_api, read)["content"]
    assert "changed since you last read it" in tool_result(messages_api, stale)["content"]
    missed = tool_result(messages_api, miss)["content"]
    assert "closest match is lines 2–2" in missed and "return 'Hi!'" in missed
    assert "lines 2–2 now read" in tool_result(messages_api, hit)["content"]


def test_a_change_to_a_file_the_model_never_read_in_its_conversation_is_refused(
    project, messages_api
):
    """Read before edit, over the rounds of one conversation: a file read
    while planning may be edited in the edit round; the test it never read is
    not overwritten (the refusal says why); a new file needs no read."""
    (project / "greet.py").write_text("def greet(name):\n    return 'Hi'\n")
    messages_api.reply_tool("read_file", {"path": "greet.py"})
    messages_api.reply_json(PLAN)
    unread = messages_api.reply_tool(
        "write_file", {"path": "check_greet.py", "content": "print('1 passed in 0.01s')\n"}
    )
    edit = messages_api.reply_tool(
        "edit_file",
        {"path": "greet.py", "old_text": "return 'Hi'", "new_text": "return f'Hello, {name}!'"},
    )
    new = messages_api.reply_tool("write_file", {"path": "test_more.py", "content": "X = 1\n"})
    queue_edit(messages_api)

    result = stepkit_implement(ctx_for(project))

    assert result.sentinel == "CODER_COMPLETE", result.text
    refused = tool_result(messages_api, unread)
    assert (
        refused["is_error"]
        and "you have not read this file in this conversation" in refused["content"]
    )
    assert (project / "check_greet.py").read_text() == CHECK
    assert not tool_result(messages_api, edit).get("is_error")
    assert not tool_result(messages_api, new).get("is_error")
    assert (project / "greet.py").read_text() == GOOD


def test_the_coder_is_told_every_gate_command_and_its_own_check_runs_lint_as_the_step_will(
    project, messages_api, monkeypatch
):
    """A lint error (here an unused import, found by the real ruff) is caught
    by the coder's own check and fixed inside its conversation, not by the
    step's lint gate a whole round later."""
    ruff = Path(sys.executable).with_name("ruff")
    monkeypatch.setenv("LINT_CMD", f"{ruff} check --no-cache --select F401 greet.py")
    monkeypatch.setenv("FORMAT_CMD", f"{ruff} format --no-cache")
    messages_api.reply_json(PLAN)
    queue_edit(messages_api, ("greet.py", "import os\n" + GOOD))
    # the format gate reformatted greet.py since the model wrote it: it reads it again first
    messages_api.reply_tool("read_file", {"path": "greet.py"})
    queue_edit(messages_api, ("greet.py", GOOD), summary="removed the unused import")

    result = stepkit_implement(ctx_for(project, state={"changed_files": []}))

    first = messages_api.requests[0].body["messages"][0]["content"]
    prompt = "\n".join(block.get("text", "") for block in first if isinstance(block, dict))
    judges = prompt.split("# How stepkit judges the change", 1)[1]
    for line in (
        f"- format: `{ruff} format --no-cache` (run on the files the step changed)",
        f"- lint: `{ruff} check --no-cache --select F401 greet.py`",
        f"- build: `{sys.executable} -m py_compile greet.py`",
        f"- tests: `{sys.executable} check_greet.py`",
    ):
        assert line in judges
    assert result.sentinel == "CODER_COMPLETE", result.text
    assert "Fix attempts: 1 of 3" in result.text
    fix_prompt = messages_api.requests[4].body["messages"][-1]["content"][-1]["text"]
    assert "The lint gate failed after your change (fix attempt 1 of 3)" in fix_prompt
    assert "F401" in fix_prompt
    assert not messages_api.tool_results(6)[0].get("is_error")  # the write after the read
    assert [(g.name, g.status) for g in result.gates] == [
        ("format", "pass"),
        ("lint", "pass"),
        ("build", "pass"),
        ("tests", "pass"),
    ]


def test_every_coders_prompt_frames_its_material_in_documents(project):
    from stepkit.plugins.coders.prompt import build_coder_prompt

    prompt = build_coder_prompt(
        make_ctx(
            project,
            state={
                "fix_instructions": "$ ruff check\nF401 os unused",
                "user_guidance": "keep it small",
            },
        )
    )
    for title, body in (
        ("Fix instructions", "F401 os unused"),
        ("User guidance", "keep it small"),
        ("Implementation brief", "Put greet() in greet.py."),
        ("Plan of step 3 (Add greeting)", "## Acceptance criteria"),
    ):
        assert f'<document title="{title}">' in prompt, title
        assert (
            body in prompt.split(f'<document title="{title}">', 1)[1].split("</document>", 1)[0]
        ), title
    assert "# Fix instructions" not in prompt and "# Implementation brief" not in prompt
