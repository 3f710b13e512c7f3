"""``stepkit mcp`` stops as the CLI does: SIGTERM or SIGHUP during a
``run_step`` ends the running gate's processes, saves the checkpoint as
interrupted and ends the server; a later ``stepkit resume`` goes on.  A real
server process driven by the MCP SDK's client, a real project, a tests gate
that waits on a marker file (every wait here is on a file or a process)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support.crash import assert_gate_stopped, checkpoint, waiting_test_cmd
from tests.support.e2e import PY, make_project
from tests.support.waiting import SAFETY_S

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'stepkit[mcp]')")

import anyio  # installed with the MCP SDK
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.variants import first_by_default

#: unconfined (a bwrap that cannot create namespaces): the pids its coders and gates
#: tell from inside a sandbox are their PID namespace's, which name other processes here
pytestmark = pytest.mark.usefixtures("unconfined")


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def server_pid(descendant: int) -> int:
    """The ``stepkit mcp`` process above ``descendant``."""
    pid = descendant
    while pid > 1:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"stepkit" in cmdline and b"mcp" in cmdline:
            return pid
        pid = _ppid(pid)
    raise AssertionError("no stepkit mcp process above the gate")


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"


async def until(condition, seconds: float = SAFETY_S) -> None:
    """Wait until ``condition()`` holds: a file appeared, a process ended (``seconds`` bounds a hang)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"hung: waited {seconds:.0f} s"
        await anyio.sleep(0.02)


@pytest.mark.parametrize("signum", first_by_default([signal.SIGTERM, signal.SIGHUP]))
def test_a_stop_signal_during_run_step_interrupts_the_run_and_resume_goes_on(tmp_path, signum):
    project = make_project(tmp_path)
    env = project.env(TEST_CMD=waiting_test_cmd(project))
    params = StdioServerParameters(
        command=PY, args=["-m", "stepkit", "mcp"], cwd=str(project.root), env=env
    )
    started = project.state_dir / "started"
    seen: dict[str, int] = {}

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()

            async def call() -> None:
                with contextlib.suppress(Exception):  # the server goes away mid-call, as it should
                    await session.call_tool(
                        "run_step",
                        {
                            "step": 1,
                            "engine": f"scripted:{project.script()}",
                            "coder": project.scripted_coder,
                        },
                    )

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                await until(started.exists)
                seen["server"] = server_pid(int(started.read_text()))
                os.kill(seen["server"], signum)
                await until(lambda: gone(seen["server"]))
                tasks.cancel_scope.cancel()

    anyio.run(main)
    assert_gate_stopped(project)  # the waiting gate did not outlive the server
    runs = sorted((store_dir(project.root) / "runs").iterdir())
    run_id = runs[-1].name
    cp = checkpoint(project, run_id)
    assert cp["status"] == "interrupted" and cp["node"] == "verify_tests", cp["status"]

    (project.state_dir / "go").touch()
    resumed = project.stepkit("resume", run_id, "--project-dir", str(project.root), env=env)
    assert resumed.code == 5, resumed.stdout + resumed.stderr
    assert resumed.data["pending"]["node"] == "gate_user_review"
