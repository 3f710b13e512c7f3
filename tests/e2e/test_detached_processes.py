"""A process that a gate or the coder detached into its own session
(``setsid``) escapes the kill of the command's process group.  stepkit,
their subreaper, finds it when the command ends and stops it before the next
gate runs; it says so in the command's output (log and evidence) and in an
``events.jsonl`` event.  The real CLI runs the step; the test gate checks
that the detached process is gone before it passes.

These runs are unconfined (a bwrap that cannot create namespaces): in the
sandbox a command's processes die with its PID namespace when it ends, and
the pids they write are the namespace's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support.crash import wait_until_gone
from tests.support.e2e import PY, make_project, sh, unconfined_env
from tests.support.variants import first_by_default

#: Detaches ``sleep 300`` into its own session (it keeps the output pipe
#: open), waits until it told its pid in ``<name>.pid``, and goes on.
#: ``{state}`` is shell-quoted; the inner script gets it as ``$0``.
DETACH = (
    """setsid sh -c 'echo $$ > "$0/$1.tmp"; mv "$0/$1.tmp" "$0/$1.pid"; """
    "exec sleep 300' {state} {name} & while [ ! -e {state}/{name}.pid ]; do sleep 0.01; done; "
)

#: The tests gate: fails while the detached process still runs, else the real tests.
CHECK_GONE = """import pathlib
import subprocess
import sys

pid = int(pathlib.Path(sys.argv[1]).read_text())
try:
    state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
except FileNotFoundError:
    state = "gone"
if state not in ("gone", "Z"):
    print(f"FAILED detached process {pid} still runs")
    sys.exit(1)
sys.exit(subprocess.call([sys.executable, "check.py"]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("who", first_by_default(["build", "coder"]))
def test_a_detached_process_is_stopped_before_the_next_gate_and_reported(tmp_path, who):
    project = make_project(tmp_path, reviewer=False)
    state = project.state_dir
    detach = DETACH.format(state=sh(state), name=who)
    (state / "check_gone.py").write_text(CHECK_GONE)
    env = project.env(
        TEST_CMD=sh(PY, state / "check_gone.py", state / f"{who}.pid"),
        **unconfined_env(tmp_path),
    )
    coder = None
    if who == "build":
        # in the project only: the step's start runs the build too, in a scratch copy
        here = f'[ "$(pwd -P)" = {sh(project.root.resolve())} ]'
        env["BUILD_CMD"] = f"if {here}; then {detach}fi; {PY} -m py_compile calc.py"
    else:
        coder = f"command:{detach}{sh(PY, state / 'coder.py')}"
    try:
        result = project.run(coder=coder, env=env)
    finally:
        pid = int((state / f"{who}.pid").read_text())
        leaked = wait_until_gone([pid], 0)
    assert not leaked, "the detached process outlived its command"
    assert (result.code, result.data["pending"]["node"]) == (5, "gate_user_review"), result.stdout
    gates = {gate["name"]: gate for gate in result.data["gates"]}
    assert gates["tests"]["status"] == "pass"

    run_dir = store_dir(project.root) / "runs" / result.data["run_id"]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    stopped = [e for e in events if e["event"] == "detached_stopped"]
    node = "verify_build" if who == "build" else "implement"
    assert [(e["node"], [p["pid"] for p in e["processes"]]) for e in stopped] == [(node, [pid])]
    assert "sleep 300" in stopped[0]["processes"][0]["command"]

    line = f"[stepkit: stopped a detached process the command left running: pid {pid} (sleep 300)]"
    if who == "build":
        assert line in gates["build"]["evidence"]
        assert line in (run_dir / "logs").joinpath(gates["build"]["log"]).read_text()
    else:
        assert (
            line
            in json.loads((run_dir / "state.json").read_text())["state"]["coder_result"]["text"]
        )
    assert "kept the output open" not in json.dumps(result.data)

    # named where the user looks: the final question (and so the output) and the handoff
    who = "the build gate" if who == "build" else "the coder"
    named = f"a process {who} started outlived its node and was ended: sleep 300"
    assert named in result.data["pending"]["question"], result.data["pending"]["question"]
    assert named in result.output
    draft = Path(result.data["handoff_draft"])  # the handoff, until it is approved
    deviations = draft.read_text().split("## Deviations", 1)[1].split("\n## ", 1)[0]
    assert f"- Recorded by stepkit: {named}" in deviations, deviations


def test_the_runner_stops_what_a_detached_process_detached_in_turn(tmp_path):
    from stepkit.workspace import process

    command = (
        "setsid sh -c 'setsid sleep 300 & echo $! > inner.pid; exec sleep 300' & "
        "while [ ! -s inner.pid ]; do sleep 0.01; done; echo started"
    )
    run = process.run(command, cwd=tmp_path, timeout=60)
    inner = int((tmp_path / "inner.pid").read_text())
    pids = [p.pid for p in run.detached]
    leaked = wait_until_gone([*pids, inner], 0)
    assert not leaked
    assert inner in pids and len(pids) == 2, run.detached
    assert run.exit_code == 0 and run.output.startswith("started\n")
    assert all(p.note() in run.output for p in run.detached)
    assert "kept the output open" not in run.output  # the runner never waited out the drain


#: Starts a writer that escapes the command's group and environment (``setsid
#: env -i``), tells its pid, and rewrites calc.py once the marker file appears.
#: ``{state}`` and ``{root}`` are shell-quoted; the inner script gets them as ``$0`` and ``$1``.
ESCAPE = (
    """setsid env -i sh -c 'echo $$ > "$0/writer.tmp"; mv "$0/writer.tmp" "$0/writer.pid"; """
    """while [ ! -e "$0/marker" ]; do sleep 0.05; done; echo BROKEN > "$1/calc.py"' """
    "{state} {root} > /dev/null 2>&1 < /dev/null & "
    "while [ ! -e {state}/writer.pid ]; do sleep 0.01; done; "
)


def test_a_writer_started_with_setsid_env_i_is_ended_with_its_node_and_reported(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    state = project.state_dir
    coder = f"command:{ESCAPE.format(state=sh(state), root=sh(project.root))}{sh(PY, state / 'coder.py')}"
    try:
        result = project.run(coder=coder, env=project.env(**unconfined_env(tmp_path)))
    finally:
        pid = int((state / "writer.pid").read_text())
        leaked = wait_until_gone([pid], 0)
    assert not leaked, "the writer outlived the coder's node"
    assert (result.code, result.data["pending"]["node"]) == (5, "gate_user_review"), result.stdout

    run_dir = store_dir(project.root) / "runs" / result.data["run_id"]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    stopped = [
        (e["node"], p["pid"], p["command"])
        for e in events
        if e["event"] == "detached_stopped"
        for p in e["processes"]
    ]
    assert {node for node, _, _ in stopped} == {"implement"}
    assert (
        stopped[0][1] == pid and "sh -c echo $$" in stopped[0][2]
    )  # named; its own children follow
    coder_text = json.loads((run_dir / "state.json").read_text())["state"]["coder_result"]["text"]
    assert f"pid {pid} (sh -c echo $$" in coder_text

    before = (project.root / "calc.py").read_text()
    (state / "marker").write_text("go")
    assert (project.root / "calc.py").read_text() == before  # nobody is left to write it
