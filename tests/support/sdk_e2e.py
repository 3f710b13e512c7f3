"""End-to-end helpers for runs of the real CLI on the real Anthropic SDK.

The CLI runs as a subprocess with ``ANTHROPIC_BASE_URL`` pointing at the
loopback Messages API of :mod:`tests.support.messages_api`, which lives in the test
process; the project, the command coder and the gates come from
:mod:`tests.support.e2e`.  Requests are told apart by their system prompt
(the reading nodes, who share one, by the role their first message names),
so a test can check which node sent what.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.plugins.coders.anthropic import CODER_SYSTEM, PLAN_TASK
from stepkit.plugins.stages.readers import READER_SYSTEM
from stepkit.records import Usage
from tests.support.e2e import GOOD_MUL, HANDOFF, ORIENT, PY, SWEEP, Project, Result, sh

SYSTEMS = {READER_SYSTEM: "reader", CODER_SYSTEM: "coder"}
#: The reading nodes by the role their first message names, after the plan.
ROLES = {
    "orientation": "orient",
    "sweep": "edge_case_sweep",
    "review": "independent_review",
    "handoff": "write_handoff",
}

#: A test command that counts its own invocations (in a file outside the
#: project, so counting does not change the tree) and then runs check.py.
COUNTED_TEST = """import os, runpy, sys
with open(sys.argv[1], "a") as counter:
    counter.write(os.getcwd() + "\\n")
sys.argv = ["check.py"]
sys.path.insert(0, os.getcwd())
runpy.run_path("check.py", run_name="__main__")
"""

NO_SWEEP_ANNOTATIONS = {**SWEEP, "annotations": []}


def sdk_env(project: Project, api: Any, **extra: str) -> dict[str, str]:
    """The CLI's environment: the project's, plus the loopback API."""
    return project.env(ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY=api.api_key, **extra)


def run_sdk(
    project: Project,
    api: Any,
    *args: str,
    coder: str | None = None,
    env: dict[str, str] | None = None,
) -> Result:
    """``stepkit run --engine anthropic --json`` on the project (the command
    coder of e2e_support unless ``coder`` is given)."""
    return project.stepkit(
        "run",
        "--project-dir",
        str(project.root),
        "--engine",
        "anthropic",
        "--coder",
        coder or project.scripted_coder,
        *args,
        env=env or sdk_env(project, api),
    )


def node_of(request: Any) -> str:
    """The node that sent a recorded request (by its system prompt)."""
    system = request.body.get("system") or [{}]
    node = SYSTEMS.get(system[0].get("text", ""), "unknown")
    if node == "reader":
        role = request.body["messages"][0]["content"][1]["text"].split("\n", 1)[0]
        return ROLES.get(role.removeprefix("# Your role: "), "unknown")
    if node == "coder":  # one conversation: the round is the last task it was given
        tasks = [
            block["text"]
            for message in request.body["messages"]
            if message["role"] == "user"
            for block in message["content"]
            if block.get("type") == "text"
            and not block["text"].startswith(("You have used all your turns", "Your reply was not"))
        ]
        return "coder_plan" if PLAN_TASK in tasks[-1] else "coder_edit"
    return node


def nodes(api: Any) -> list[str]:
    """The nodes of every request the server received, in order."""
    return [node_of(request) for request in api.requests]


def queue_stages(api: Any) -> None:
    """Queue one structured answer for orient, the sweep and the handoff writer."""
    api.reply_json(ORIENT)
    api.reply_json(SWEEP)
    api.reply_json(HANDOFF)


def counted_tests(project: Project) -> tuple[str, Path]:
    """A TEST_CMD that counts its runs; returns (command, counter file)."""
    script = project.state_dir / "counted_test.py"
    script.write_text(COUNTED_TEST)
    counter = project.state_dir / "test_runs"
    return sh(PY, script, counter), counter


def runs_of(counter: Path) -> int:
    """How many times the counted test command ran in the project (not in the
    scratch copy where the step's start is measured)."""
    project = (counter.parent.parent / "project").resolve()
    lines = counter.read_text().splitlines() if counter.exists() else []
    return sum(Path(line).resolve() == project for line in lines)


def token_sum(usages: list[dict[str, int]]) -> Usage:
    """The run usage the engine should record for these reply usages."""
    total = Usage()
    for u in usages:
        total = total.add(
            Usage(
                input_tokens=u.get("input_tokens", 0),
                output_tokens=u.get("output_tokens", 0),
                cache_read_tokens=u.get("cache_read_input_tokens", 0),
                cache_write_tokens=u.get("cache_creation_input_tokens", 0),
            )
        )
    return total


def builtin_edit(api: Any) -> None:
    """The built-in coder's scripted work: it reads calc.py and plans, then
    write_file and edit_file together add a correct ``mul``, then "done"."""
    api.reply_tool("read_file", {"path": "calc.py"})  # read before it is changed
    api.reply_json(
        {
            "files_to_touch": ["calc.py"],
            "risks": ["none"],
            "complexity": 2,
            "approach": "Add mul next to add.",
        }
    )
    api.reply_tool("write_file", {"path": "calc.py", "content": GOOD_MUL.replace("a * b", "a * 1")})
    api.reply_tool("edit_file", {"path": "calc.py", "old_text": "a * 1", "new_text": "a * b"})
    api.reply_tool("run_command", {"command": "true"})  # it runs its tests before answering
    api.reply_json({"status": "done", "summary": "Added calc.mul."})
