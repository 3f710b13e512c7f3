"""One conversation on every engine: a whole step through the real CLI on
``--engine anthropic`` and ``--engine openai`` (the real SDKs against the
loopback Messages and chat-completions APIs) and on ``--engine claude`` and
``--engine codex`` (stand-ins replaying their recorded JSON, keeping
sessions as the real CLIs do), with the built-in coder and reviewer.

The step goes through a step-level fix round (the real ruff finds the
unused import the coder left) and a review round (a critical finding sends
the coder back).  Every round of the coder continues the one conversation
the plan round opened: the API engines send the earlier turns again, the
CLI engines resume the same session with only the new material (the
failing gate's evidence or the findings, and the diff since the coder's
last round); the plan is asked for once.  The handoff writer is shown
every round.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from stepkit.plugins.coders.anthropic import CODER_SYSTEM, PLAN_TASK
from stepkit.plugins.stages.handoff import HANDOFF_SYSTEM
from tests.support import fake_cli
from tests.support.e2e import GOOD_MUL, HANDOFF, ORIENT, SWEEP, make_project

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

pytest_plugins = ["tests.support.messages_api", "tests.support.chat_api"]

PLAN = {
    "status": "plan",
    "summary": "add mul",
    "plan": {
        "files_to_touch": ["calc.py"],
        "risks": ["none"],
        "complexity": 2,
        "approach": "Add mul next to add.",
    },
}
UNUSED_IMPORT = "import os\n\n\n" + GOOD_MUL
DOCUMENTED = GOOD_MUL.replace("def mul(a, b):\n", 'def mul(a, b):\n    """a times b."""\n')
REVIEW_CRITICAL = {
    "findings": [
        {
            "severity": "critical",
            "file": "calc.py",
            "criterion": "none",
            "problem": "mul has no docstring saying what it returns",
        }
    ]
}
REVIEW_CLEAN = {"findings": []}
#: every model call of the step, in order: (node, answer, the file the coder leaves)
STEP: list[tuple[str, dict[str, Any], str | None]] = [
    ("orient", ORIENT, None),
    ("coder_plan", PLAN, None),
    ("coder_edit", {"status": "done", "summary": "Added calc.mul.", "plan": None}, UNUSED_IMPORT),
    (
        "coder_edit",
        {"status": "done", "summary": "Removed the unused import os.", "plan": None},
        GOOD_MUL,
    ),
    ("edge_case_sweep", {**SWEEP, "needs_independent_review": True}, None),
    ("independent_review", REVIEW_CRITICAL, None),
    ("coder_edit", {"status": "done", "summary": "Documented mul.", "plan": None}, DOCUMENTED),
    ("edge_case_sweep", {**SWEEP, "needs_independent_review": True}, None),
    ("independent_review", REVIEW_CLEAN, None),
    ("write_handoff", HANDOFF, None),
]
#: the real ruff, blind on its first run only: the coder's own first check
#: passes, so the unused import is first reported by the step's lint gate
LINT_BLIND_ONCE = """import pathlib, subprocess, sys
runs = pathlib.Path(sys.argv[1])
# counted in the project only: the step's start is measured in a scratch copy first
here = pathlib.Path.cwd().resolve() == (runs.parent / "project").resolve()
count = int(runs.read_text()) + here if runs.exists() else 1
runs.write_text(str(count))
if count > 1 or not here:
    sys.exit(subprocess.run([sys.argv[2], "check", "--no-cache", "--select", "F401", "calc.py"]).returncode)
"""


def queue_api(api: Any) -> None:
    """The step on an API engine: each coder round writes, runs its tests, answers."""
    for node, answer, leaves in STEP:
        if node == "coder_plan":
            api.reply_tool("read_file", {"path": "calc.py"})  # it reads what it will change
        if leaves is not None:
            api.reply_tool("write_file", {"path": "calc.py", "content": leaves})
            api.reply_tool("run_command", {"command": "true"})
        api.reply_json(answer)


def script_cli(
    cli: str, state: Path, steps: list[tuple[str, dict[str, Any], str | None]] = STEP
) -> None:
    """The step on an agent CLI: one call per answer; the coder's CLI writes with its own tools."""
    actions = []
    for _node, answer, leaves in steps:
        if cli == "claude":
            result = fake_cli.recorded("claude_success.json")[0]
            lines = [{**result, "structured_output": answer, "result": json.dumps(answer)}]
        else:
            lines = fake_cli.recorded("codex_success.jsonl")
            lines[2] = {
                "type": "item.completed",
                "item": {"id": "item_0", "type": "agent_message", "text": json.dumps(answer)},
            }
        actions.append({"lines": lines, **({"write": {"calc.py": leaves}} if leaves else {})})
    fake_cli.script(state, *actions)


def strip_cache_marks(value: Any) -> Any:
    """A request's messages without the cache markers (they move to the newest turn)."""
    if isinstance(value, dict):
        return {k: strip_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_marks(v) for v in value]
    return value


def system_text(body: dict[str, Any]) -> str:
    """The instructions of a request (the Messages API's system blocks, or chat's system message)."""
    system = body.get("system") or body["messages"][0]["content"]
    return system if isinstance(system, str) else "".join(block.get("text", "") for block in system)


def last_user_text(messages: list[dict[str, Any]]) -> str:
    content = messages[-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


def api_coder_rounds(bodies: list[dict[str, Any]]) -> list[str]:
    """The opening task of each coder round on an API engine, checking that
    each request carries the whole conversation before it."""
    coder = [b for b in bodies if system_text(b).startswith(CODER_SYSTEM)]
    openings, previous = [], None
    for body in coder:
        messages = strip_cache_marks(body["messages"])
        assert previous is None or messages[: len(previous)] == previous, (
            "the conversation started over"
        )
        last = messages[-1]
        tool_turn = last["role"] == "tool" or (
            isinstance(last["content"], list)
            and any(block.get("type") == "tool_result" for block in last["content"])
        )
        if not tool_turn and not last_user_text(messages).startswith("You changed files after"):
            openings.append(last_user_text(messages))
        previous = messages
    return openings


def coder_calls(calls: list[dict[str, Any]], cli: str) -> list[dict[str, Any]]:
    """The coder's calls of a CLI engine."""
    if cli == "claude":
        return [
            c
            for c in calls
            if c["argv"][c["argv"].index("--append-system-prompt") + 1].startswith(CODER_SYSTEM)
        ]
    return [c for c in calls if "llm-coder_" in c["argv"][c["argv"].index("--output-schema") + 1]]


def cli_coder_rounds(calls: list[dict[str, Any]], cli: str) -> list[str]:
    """The stdin of each coder call on a CLI engine, checking that the plan
    call opened a saved session and every later call resumed that one."""
    opened, *later = coder_calls(calls, cli)
    assert not opened["resumed"] and opened["stdin"].count(PLAN_TASK) == 1
    assert [c["session"] for c in later] == [opened["session"]] * len(later)
    assert all(c["resumed"] for c in later)
    assert not any(CODER_SYSTEM in c["stdin"] or "Acceptance criteria" in c["stdin"] for c in later)
    return [opened["stdin"].rsplit("\n\n", 1)[-1], *(c["stdin"] for c in later)]


def handoff_material(engine: str, api: Any, calls: list[dict[str, Any]]) -> str:
    """What the handoff writer was sent (its instructions come after the
    plan, in the reading nodes' shared layout)."""
    if engine == "claude":
        return next(c["stdin"] for c in calls if HANDOFF_SYSTEM in c["stdin"])
    if engine == "codex":
        return next(
            c["stdin"]
            for c in calls
            if "llm-write_handoff" in c["argv"][c["argv"].index("--output-schema") + 1]
        )
    bodies = [r.body for r in api.requests] if engine == "anthropic" else api.requests
    firsts = [last_user_text([m for m in b["messages"] if m["role"] == "user"][:1]) for b in bodies]
    return next(text for text in firsts if HANDOFF_SYSTEM in text)


@pytest.mark.parametrize("engine", ["anthropic", "openai", "claude", "codex"])
def test_every_round_of_the_coder_continues_one_conversation(tmp_path, engine, request):
    if engine == "openai":
        pytest.importorskip(
            "openai", reason="the OpenAI SDK is not installed (pip install 'stepkit[openai]')"
        )
    project = make_project(tmp_path, reviewer=False)
    config = project.root / "stepkit.toml"
    config.write_text("reuse_coder_evidence = false\n" + config.read_text())
    lint = tmp_path / "lint_blind_once.py"
    lint.write_text(LINT_BLIND_ONCE)
    ruff = Path(sys.executable).with_name("ruff")
    env = {
        "LINT_CMD": shlex.join([sys.executable, str(lint), str(tmp_path / "lint_runs"), str(ruff)])
    }
    api, state, spec = None, tmp_path / f"{engine}-state", engine
    state.mkdir()
    (tmp_path / "lint_runs").write_text("0")
    # the gate's counter and the fake CLI's record of its calls (the real CLI's is its declared ~/.codex)
    project.allow_writes(tmp_path / "lint_runs", state)
    if engine == "anthropic":
        api = request.getfixturevalue("messages_api")
        queue_api(api)
        env.update(ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY=api.api_key)
    elif engine == "openai":
        api = request.getfixturevalue("chat_api")
        queue_api(api)
        env.update(OPENAI_BASE_URL=api.base_url, OPENAI_API_KEY=api.api_key)
        spec = "openai:llama3.2"
    else:
        fake_cli.install(tmp_path / "bin", engine, state)
        script_cli(engine, state)
        env.update(PATH=fake_cli.path_with(tmp_path / "bin"))

    result = project.stepkit(
        "run",
        "--project-dir",
        str(project.root),
        "--engine",
        spec,
        "--coder",
        "anthropic",
        "--reviewer",
        "anthropic",
        "--set",
        "llm_max_retries=0",
        env=project.env(**env),
    )

    assert result.code == 5 and result.data["pending"]["node"] == "gate_user_review", (
        result.stderr + result.stdout
    )
    assert (project.root / "calc.py").read_text() == DOCUMENTED
    assert result.data["fix_attempts"] == 1  # the lint round; a review round is not a fix attempt

    calls = fake_cli.calls(state) if engine in ("claude", "codex") else []
    if api is not None:
        bodies = [r.body for r in api.requests] if engine == "anthropic" else api.requests
        openings = api_coder_rounds(bodies)
    else:
        openings = cli_coder_rounds(calls, engine)
    plan, first, lint_round, review_round = openings
    assert PLAN_TASK in plan
    assert first.startswith("Make the change now. Your plan:")
    for opening in (lint_round, review_round):
        assert opening.startswith("A new implement round of this step")
        assert "Make the fix now" in opening and "since your last round" in opening
        assert "Plan the change now" not in opening and "Your plan:" not in opening
    assert (
        "The lint gate failed" in lint_round
        and "F401" in lint_round
        and "`os` imported but unused" in lint_round
    )
    assert lint_round.count("exit code: 1") == 1
    assert (
        "+import os" not in lint_round
    )  # the diff since its last round: nothing changed behind its back
    assert (
        "Fix these critical review findings" in review_round
        and "mul has no docstring" in review_round
    )

    handoff = handoff_material(engine, api, calls)
    rounds = handoff.split('<document title="Coder rounds', 1)[1].split("</document>", 1)[0]
    assert "### Round 1\nTask: implement the step" in rounds and "Added calc.mul." in rounds
    assert (
        "### Round 2\nTask: The lint gate failed" in rounds
        and "Removed the unused import os." in rounds
    )
    assert (
        "### Round 3\nTask: Fix these critical review findings" in rounds
        and "Documented mul." in rounds
    )


@pytest.mark.parametrize("engine", ["claude", "codex"])
def test_a_run_paused_at_the_plan_approval_resumes_the_coders_session(tmp_path, engine):
    """The session id is kept with the run: after ``stepkit resume`` the
    edit round continues the session the plan round opened."""
    project = make_project(tmp_path, reviewer=False)
    state = tmp_path / f"{engine}-state"
    fake_cli.install(tmp_path / "bin", engine, state)
    project.allow_writes(state)  # the fake CLI's record of its calls and sessions
    big_plan = {**PLAN, "plan": {**PLAN["plan"], "complexity": 8}}
    steps = [
        ("orient", ORIENT, None),
        ("coder_plan", big_plan, None),
        ("coder_edit", {"status": "done", "summary": "Added calc.mul.", "plan": None}, GOOD_MUL),
        ("edge_case_sweep", SWEEP, None),
        ("write_handoff", HANDOFF, None),
    ]
    script_cli(engine, state, steps)
    env = project.env(PATH=fake_cli.path_with(tmp_path / "bin"))
    args = ["run", "--project-dir", str(project.root), "--engine", engine, "--coder", "anthropic"]

    paused = project.stepkit(*args, env=env)
    assert paused.code == 5 and paused.data["pending"]["node"] == "coder_plan_approval", (
        paused.stderr
    )
    resumed = project.resume("yes", env=env)
    assert resumed.data["pending"]["node"] == "gate_user_review", resumed.stderr + resumed.stdout

    plan_call, edit_call = coder_calls(fake_cli.calls(state), engine)
    assert (
        not plan_call["resumed"]
        and edit_call["resumed"]
        and edit_call["session"] == plan_call["session"]
    )
    assert edit_call["stdin"].startswith("Make the change now. Your plan:")
