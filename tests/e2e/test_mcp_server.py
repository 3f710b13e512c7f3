"""``stepkit mcp`` driven by the MCP SDK's own client over stdio: a real
server process, a real git project, the scripted engine and the command
coder of tests/support/e2e.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import PY, make_project

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'stepkit[mcp]')")

import anyio  # installed with the MCP SDK
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


class Client:
    """One session with a ``stepkit mcp`` server; records progress messages."""

    def __init__(self, session: ClientSession):
        self.session = session
        self.progress: list[str] = []

    async def call(self, tool: str, **arguments: Any) -> Any:
        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            self.progress.append(message or "")

        return await self.session.call_tool(tool, arguments, progress_callback=on_progress)


def serve(project, scenario, errlog=None) -> None:
    """Run ``scenario(client)`` against a server started in the project
    (its stderr into ``errlog``, default this process's)."""
    params = StdioServerParameters(
        command=PY, args=["-m", "stepkit", "mcp"], cwd=str(project.root), env=project.env()
    )

    async def main() -> None:
        async with (
            stdio_client(params, **({"errlog": errlog} if errlog else {})) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await scenario(Client(session))

    anyio.run(main)


def data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


@pytest.mark.slow
def test_status_run_step_paused_at_the_final_gate_then_resume_approve(tmp_path):
    project = make_project(tmp_path)
    script = project.script()
    seen: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.session.list_tools()).tools}
        assert set(tools) >= {
            "status",
            "run_step",
            "resume",
            "verify",
            "detect",
            "check_handoff",
            "graph",
        }
        assert "step" in tools["run_step"].input_schema["properties"]

        status = data(await client.call("status"))
        seen["status"] = status

        paused = data(
            await client.call(
                "run_step", step=1, engine=f"scripted:{script}", coder=project.scripted_coder
            )
        )
        seen["paused"], seen["progress"] = paused, list(client.progress)
        done = data(await client.call("resume", run_id=paused["run_id"], answer="approve"))
        seen["done"] = done

    serve(project, scenario)
    assert [s["step"] for s in seen["status"]["steps"]] == [1, 2, 3]
    paused = seen["paused"]
    assert paused["outcome"] == "PAUSED" and paused["exit_code"] == 5
    assert paused["pending"]["node"] == "gate_user_review"
    assert "approve" in paused["pending"]["options"]
    assert paused["run_id"] in paused["pending"]["how_to_answer"]
    assert {g["name"]: g["status"] for g in paused["gates"]}["tests"] == "pass"
    assert all("evidence" not in g for g in paused["gates"])  # passes carry no excerpt
    assert "orient started" in seen["progress"] and any("implement" in m for m in seen["progress"])
    assert seen["done"]["outcome"] == "STEP_COMPLETE" and seen["done"]["exit_code"] == 0
    assert project.plan_status(1) == "complete"


@pytest.mark.slow
def test_run_step_in_a_worktree_then_resume_commits_on_its_branch(tmp_path):
    project = make_project(tmp_path)
    script = project.script()
    seen: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        paused = data(
            await client.call(
                "run_step",
                step=1,
                engine=f"scripted:{script}",
                coder=project.scripted_coder,
                worktree=True,
            )
        )
        seen["paused"] = paused
        seen["done"] = data(await client.call("resume", run_id=paused["run_id"], answer="approve"))

    serve(project, scenario)
    assert seen["paused"]["outcome"] == "PAUSED" and seen["paused"]["branch"] == "stepkit/01-mul"
    done = seen["done"]
    assert (
        done["outcome"] == "STEP_COMPLETE" and done["commit"] and done["branch"] == "stepkit/01-mul"
    )
    assert project.plan_status(1) == "pending"  # the user's tree is not touched
    assert "status: complete" in project.git("show", "stepkit/01-mul:plans/steps/01-mul.md")


def test_the_final_approval_cannot_be_pre_answered_and_bad_arguments_are_tool_errors(tmp_path):
    project = make_project(tmp_path)
    script = project.script()
    seen: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        seen["pre"] = await client.call(
            "run_step",
            step="1",
            engine=f"scripted:{script}",
            coder=project.scripted_coder,
            answers={"gate_user_review": "approve"},
        )
        seen["bad_step"] = await client.call("run_step", step="zero")
        seen["bad_type"] = await client.call("run_step", step="1", rerun="sometimes")
        seen["no_run"] = await client.call("resume", run_id="no-such-run")
        seen["graph"] = await client.call("graph", format="svg")
        seen["status"] = await client.call("status")  # the server is still up

    serve(project, scenario)
    for name in ("pre", "bad_step", "bad_type", "no_run", "graph"):
        assert seen[name].is_error, name
    assert "final approval gate" in seen["pre"].content[0].text
    assert "--step zero" in seen["bad_step"].content[0].text
    assert not seen["status"].is_error
    assert not (store_dir(project.root) / "runs").exists() or not any(
        (store_dir(project.root) / "runs").iterdir()
    )


NOISY_STEPCONF = """\
from stepkit import hookimpl

@hookimpl
def stepkit_detect_project(project_dir):
    print("NOISE from a plugin")
"""


def test_verify_detect_check_handoff_and_graph_are_bounded_objects(tmp_path):
    """... and what a plugin prints misses the protocol (it goes to stderr)."""
    project = make_project(tmp_path)
    (project.root / "stepconf.py").write_text(NOISY_STEPCONF)
    bad_handoff = project.root / "handoff.md"
    bad_handoff.write_text("# not a handoff\n")
    seen: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        seen["verify"] = data(await client.call("verify"))
        seen["verify_progress"] = list(client.progress)
        seen["detect"] = data(await client.call("detect"))
        seen["handoff"] = data(await client.call("check_handoff", path=str(bad_handoff)))
        seen["graph"] = data(await client.call("graph"))

    with (tmp_path / "server-stderr.txt").open("w") as errlog:
        serve(project, scenario, errlog)
    assert "NOISE from a plugin" in (tmp_path / "server-stderr.txt").read_text()
    verify = seen["verify"]
    assert verify["ok"] is False  # calc has no mul yet
    tests = next(g for g in verify["gates"] if g["name"] == "tests")
    assert tests["status"] == "fail" and "test_mul" in tests["evidence"] and tests["log"]
    assert "tests: fail" in seen["verify_progress"]
    assert {g["name"] for g in seen["detect"]["gates"]} >= {"lint", "build", "tests"}
    assert seen["handoff"]["ok"] is False and seen["handoff"]["problems"]
    assert seen["graph"]["format"] == "mermaid" and "gate_user_review" in seen["graph"]["text"]
