"""Nothing outlives its command or its node: with stepkit as their child
subreaper, descendants that left the command's session and dropped its
environment (``setsid``, ``env -i``, a double fork) are still found, ended
and named; processes stepkit did not start in the meantime are left alone."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from stepkit.engine.interrupts import NodeTimeout, call_with_timeout
from stepkit.records import StageContext
from stepkit.workspace import process
from tests.support.crash import is_running, wait_until_gone

#: A double fork (the subshell exits at once) into a new session with an empty environment.
#: The command ends once the escapee is ``sleep`` itself: before that it may
#: still be waiting on its ``mv``, which would be stopped with it.
ESCAPED = (
    "( env -i setsid sh -c 'echo $$ > escaped.tmp; mv escaped.tmp escaped.pid; exec sleep 300' & ); "
    "while [ ! -e escaped.pid ]; do sleep 0.01; done; "
    'while [ "$(cat /proc/$(cat escaped.pid)/comm)" != sleep ]; do sleep 0.01; done; echo started'
)


def q(path) -> str:
    return shlex.quote(str(path))


def test_a_double_forked_env_i_process_is_stopped_with_its_command(tmp_path):
    run = process.run(ESCAPED, cwd=tmp_path, timeout=60)
    pid = int((tmp_path / "escaped.pid").read_text())
    assert not wait_until_gone([pid], 0), "the escaped process outlived its command"
    assert [p.pid for p in run.detached] == [pid]
    assert f"pid {pid} (sleep 300)" in run.output


def test_a_process_that_was_running_before_the_command_is_left_alone(tmp_path):
    before = subprocess.Popen(["sleep", "300"], start_new_session=True, env={})
    try:
        run = process.run("true", cwd=tmp_path, timeout=60)
        assert run.detached == () and is_running(before.pid)
    finally:
        before.kill()
        before.wait()


def test_what_a_node_starts_itself_ends_with_the_node(tmp_path):
    reported = []
    ctx = StageContext(
        node="implement",
        project_dir=tmp_path,
        plans_dir=tmp_path / "plans",
        state={},
        settings={},
        config=None,
        pm=None,
        run_dir=tmp_path,
        emit=lambda kind, **fields: reported.append((kind, fields)),
    )

    def node(ctx: StageContext) -> int:
        # a plugin that spawns on its own, outside stepkit's process runner
        # (sleep itself, not a shell that execs it: its name is then known when it is found)
        return subprocess.Popen(["sleep", "300"], start_new_session=True, env={}).pid

    pid = call_with_timeout(node, ctx, 60, "implement")
    assert not wait_until_gone([pid], 0), "the plugin's process outlived its node"
    assert reported == [
        (
            "detached_stopped",
            {"command": "node implement", "processes": [{"pid": pid, "command": "sleep 300"}]},
        )
    ]
    assert Path(f"/proc/{pid}").exists() is False


def test_the_commands_of_a_node_that_timed_out_do_not_outlive_it(tmp_path):
    ctx = StageContext(
        node="verify_tests",
        project_dir=tmp_path,
        plans_dir=tmp_path / "plans",
        state={},
        settings={},
        config=None,
        pm=None,
        run_dir=tmp_path,
        emit=lambda kind, **fields: None,
    )
    started = tmp_path / "started"

    def node(ctx: StageContext) -> object:
        return process.run(
            f"echo $$ > {q(started)}.tmp; mv {q(started)}.tmp {q(started)}; exec sleep 300",
            cwd=tmp_path,
            timeout=600,
        )

    with pytest.raises(NodeTimeout):
        call_with_timeout(
            node, ctx, 2.0, "verify_tests"
        )  # the node's limit, not a wait for the command
    pid = int(started.read_text())
    assert not wait_until_gone([pid], 10), "the timed-out node's command outlived it"
