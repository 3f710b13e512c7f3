"""The gate runner with real processes: statuses, limits, process-group
cleanup, bounded logging, secrets, and run_gates' order and callbacks."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from pathlib import Path

import pytest

from stepkit import hookimpl
from stepkit.config import Config, Timeouts
from stepkit.pluginmanager import DEFAULT_PLUGINS, get_plugin_manager
from stepkit.records import GateResult
from stepkit.workspace import process
from stepkit.workspace.gate_commands import resolve_commands
from stepkit.workspace.gates import run_gate, run_gates
from stepkit.workspace.store import store_dir
from tests.support.evidence_logs import evidence_pm


class Commands:
    """A test plugin naming each gate's command (None: no opinion)."""

    def __init__(self, **commands: str | None):
        self.commands = commands

    @hookimpl
    def stepkit_format_command(self):
        return self.commands.get("format")

    @hookimpl
    def stepkit_lint_command(self):
        return self.commands.get("lint")

    @hookimpl
    def stepkit_build_command(self):
        return self.commands.get("build")

    @hookimpl
    def stepkit_test_command(self):
        return self.commands.get("tests")


@pytest.fixture
def pm():
    return evidence_pm()


def gate(pm, project_dir, command, name="tests", timeout=30, no_output=30, **kw):
    return run_gate(
        name, command, "testplugin", project_dir, project_dir / "logs", timeout, no_output, pm, **kw
    )


def pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_pass_records_command_exit_code_duration_and_log(pm, project_dir):
    command = "echo out; echo err >&2; pwd"
    result = gate(pm, project_dir, command, name="build")  # a tests gate needs a runner's word too
    assert result.status == "pass"
    assert (result.command, result.plugin, result.exit_code) == (
        command,
        "testplugin",
        0,
    )
    assert result.log == str(project_dir / "logs" / "build-1.log")
    assert Path(result.log).read_text() == f"out\nerr\n{project_dir}\n"
    assert 0 < result.duration_s < 10
    datetime.fromisoformat(result.started_at)
    assert result.evidence == f"$ {result.command}\nexit code: 0\nout\nerr\n{project_dir}"
    assert result.summary == str(project_dir)


def test_a_silent_command_says_so_in_its_summary(pm, project_dir):
    result = gate(
        pm, project_dir, "true", name="lint"
    )  # a silent tests command ran no test: NOT RUN
    assert (result.status, result.summary, result.evidence) == (
        "pass",
        "no output (exit code 0)",
        "$ true\nexit code: 0",
    )


def test_nonzero_exit_is_fail_with_the_last_line_as_summary(pm, project_dir):
    result = gate(pm, project_dir, "echo working; printf 'it broke'; exit 3")
    assert (result.status, result.exit_code, result.summary) == ("fail", 3, "it broke")
    assert Path(result.log).read_bytes() == b"working\nit broke"


def test_killed_by_a_signal_is_fail(pm, project_dir):
    result = gate(pm, project_dir, "kill -SEGV $$")
    assert result.status == "fail"
    assert "killed by signal SIGSEGV" in result.evidence


def test_missing_tool_is_error_not_fail(pm, project_dir):
    result = gate(pm, project_dir, "no-such-tool-7f3a --check")
    assert (result.status, result.exit_code) == ("error", 127)
    assert "tool missing or not executable (exit 127: command not found)" in result.evidence
    assert "environment fault, not a failure of the code" in result.evidence
    assert "no-such-tool-7f3a" in result.summary


def test_not_executable_is_error(pm, project_dir):
    (project_dir / "check.sh").write_text("#!/bin/sh\necho hi\n")
    result = gate(pm, project_dir, "./check.sh")
    assert (result.status, result.exit_code) == ("error", 126)


def test_a_command_that_cannot_start_is_error(pm, tmp_path):
    result = run_gate("build", "true", None, tmp_path / "missing", tmp_path / "logs", 30, 30, pm)
    assert (result.status, result.exit_code) == ("error", None)
    assert "could not start the command" in result.evidence
    assert (
        result.summary.startswith("could not start the command: ")
        and result.summary.count("could not") == 1
    )
    assert "could not start the command" in Path(result.log).read_text()


def test_no_command_is_not_run_and_says_it_is_no_evidence(pm, project_dir):
    result = gate(pm, project_dir, None, name="build")
    assert (result.status, result.command, result.log, result.exit_code) == (
        "not_run",
        None,
        None,
        None,
    )
    assert result.evidence.startswith(
        "GATE NOT RUN: no build command was found for this project. This is NOT evidence that build passed."
    )
    assert not (project_dir / "logs").exists()


def test_timeout_kills_the_whole_process_group(pm, project_dir):
    command = "sh -c 'sleep 300 & echo $! > grandchild.pid; sleep 300'"
    result = gate(pm, project_dir, command, timeout=1)
    assert result.status == "timeout"
    assert result.exit_code is None
    assert "timed out after 1 s" in result.evidence
    assert result.summary == "timed out after 1 s"
    assert result.duration_s < 1 + process.KILL_GRACE_S
    assert pid_gone(int((project_dir / "grandchild.pid").read_text()))


def test_no_output_limit(pm, project_dir):
    result = gate(pm, project_dir, "echo started; sleep 300", timeout=60, no_output=1)
    assert result.status == "timeout"
    assert "no output for 1 s" in result.evidence
    assert "started" in result.evidence


def test_a_group_that_ignores_sigterm_gets_sigkill(pm, project_dir, monkeypatch):
    monkeypatch.setattr(process, "KILL_GRACE_S", 0.5)
    command = "trap '' TERM; sh -c 'echo $$ > child.pid; exec sleep 300' & wait"
    result = gate(pm, project_dir, command, timeout=1)
    assert result.status == "timeout"
    assert result.duration_s < 5
    assert pid_gone(int((project_dir / "child.pid").read_text()))


def test_processes_left_behind_after_a_normal_exit_are_killed(pm, project_dir):
    # the background sleep keeps the output pipe open after the shell exits
    result = gate(pm, project_dir, "sleep 300 & echo $! > bg.pid; echo done", name="build")
    assert result.status == "pass"
    assert result.duration_s < process.DRAIN_S + 5
    assert pid_gone(int((project_dir / "bg.pid").read_text()))


def test_20mb_of_output_is_logged_whole_and_condensed(pm, project_dir):
    # under half of [logs] max_mb's default of 50 MB: the whole output (a capped log: test_log_cap)
    writer = (
        "import sys\n"
        "line = b'x' * 99 + b'\\n'\n"
        "block = line * 10000\n"
        "for _ in range(20):\n"
        "    sys.stdout.buffer.write(block)\n"
        "print('final verdict: all good')\n"
    )
    (project_dir / "gen.py").write_text(writer)
    result = gate(pm, project_dir, f"{sys.executable} gen.py", name="build")
    assert result.status == "pass"
    assert Path(result.log).stat().st_size == 20 * 10000 * 100 + len("final verdict: all good\n")
    assert len(result.evidence.encode()) <= 16 * 1024
    assert result.summary == "final verdict: all good"
    assert f"of {20 * 10000 + 1} lines; full log: {result.log}]" in result.evidence


def test_secrets_are_masked_in_log_and_evidence(pm, project_dir):
    # which strings count as secrets is stepkit.workspace.redact's business (tested there);
    # here: everything the runner writes or returns goes through it
    command = "echo 'export API_KEY=a1b2c3d4e5f6g7h8'; echo key sk-ant-api03-abcdefghijklmnopqrstuv; exit 1"
    result = gate(pm, project_dir, command)
    log = Path(result.log).read_text()
    for text in (log, result.evidence, result.summary):
        assert "a1b2c3d4e5f6g7h8" not in text
        assert "sk-ant-api03" not in text
    assert "export API_KEY=[REDACTED]" in log
    assert result.summary == "key [REDACTED]"


def test_env_is_passed_to_the_command(pm, project_dir):
    result = gate(
        pm,
        project_dir,
        'echo "$GREETING"',
        name="build",
        env={"GREETING": "hello there", "PATH": os.environ["PATH"]},
    )
    assert result.summary == "hello there"


def test_logs_are_numbered_per_gate(pm, project_dir):
    first = gate(pm, project_dir, "true")
    second = gate(pm, project_dir, "true")
    lint = gate(pm, project_dir, "true", name="lint")
    assert [Path(r.log).name for r in (first, second, lint)] == [
        "tests-1.log",
        "tests-2.log",
        "lint-1.log",
    ]


def test_resolve_commands_asks_the_hooks(project_dir):
    pm = evidence_pm()
    pm.register(Commands(format="fmt", lint="", tests="run-tests"), name="testcommands")
    assert resolve_commands(pm, project_dir, Config()) == {
        "format": ("fmt", "testcommands"),
        "lint": (None, "testcommands"),
        "build": (None, None),
        "tests": ("run-tests", "testcommands"),
    }


def test_run_gates_runs_format_first_and_reports_each_gate(project_dir):
    pm = evidence_pm()
    pm.register(
        Commands(
            format="echo formatted > order.txt", lint="echo linted >> order.txt", tests="exit 1"
        ),
        name="testcommands",
    )
    started, finished = [], []
    results = run_gates(
        pm,
        project_dir,
        Config(),
        project_dir / "logs",
        gates=["tests", "lint", "format", "build"],
        on_start=lambda name, command: started.append((name, command)),
        on_gate=finished.append,
    )
    assert [r.name for r in results] == ["format", "lint", "build", "tests"]
    assert [r.status for r in results] == ["pass", "pass", "not_run", "fail"]
    assert (project_dir / "order.txt").read_text() == "formatted\nlinted\n"
    assert started == [
        ("format", "echo formatted > order.txt"),
        ("lint", "echo linted >> order.txt"),
        ("build", None),
        ("tests", "exit 1"),
    ]
    assert finished == results


def test_run_gates_takes_each_gates_limit_from_config(project_dir):
    pm = evidence_pm()
    pm.register(Commands(build="sleep 30", tests="sleep 30"), name="testcommands")
    config = Config(timeouts=Timeouts(build=0.3, tests=0.6))
    results = run_gates(pm, project_dir, config, project_dir / "logs", gates=["build", "tests"])
    assert [(r.name, r.summary) for r in results] == [
        ("build", "timed out after 0.3 s"),
        ("tests", "timed out after 0.6 s"),
    ]


def test_run_gates_rejects_unknown_gates(pm, project_dir):
    with pytest.raises(ValueError, match="unknown gate"):
        run_gates(pm, project_dir, Config(), project_dir / "logs", gates=["deploy"])


def test_environment_override_commands_are_run(project_dir, monkeypatch):
    pm = get_plugin_manager(
        builtins=["stepkit.plugins.overrides"] + [m for m in DEFAULT_PLUGINS if ".evidence." in m]
    )
    monkeypatch.setenv("TEST_CMD", "echo from-override; echo 1 passed in 0.01s")
    (result,) = run_gates(pm, project_dir, Config(), project_dir / "logs", gates=["tests"])
    assert (result.status, result.command, result.plugin) == (
        "pass",
        "echo from-override; echo 1 passed in 0.01s",
        "stepkit.plugins.overrides",
    )


#: a formatter that rewrites app.py as ``x = 1``
FORMAT_APP = f"{sys.executable} -c \"open('app.py', 'w').write('x = 1\\\\n')\""


def runner(project_dir, pm=None, **options):
    from stepkit.workspace.gates import GateRunner

    return GateRunner(
        pm or evidence_pm(), project_dir, Config(), store_dir(project_dir) / "logs", **options
    )


def commands_pm(**commands):
    pm = evidence_pm()
    pm.register(Commands(**commands), name="testcommands")
    return pm


def test_a_watched_formatter_records_whether_it_changed_the_tree(project_dir):
    from stepkit.workspace.scope import tree_hash

    (project_dir / "app.py").write_text("x=1\n")
    watched = runner(project_dir, commands_pm(format=FORMAT_APP), watch_format=True)
    (result,) = watched.run(["format"])
    assert watched.format_changed_tree and result.tree_hash == tree_hash(project_dir)
    again = runner(project_dir, commands_pm(format=FORMAT_APP), watch_format=True)
    again.run(["format"])
    assert not again.format_changed_tree  # the bytes were already formatted
    plain = runner(project_dir, commands_pm(format=FORMAT_APP))
    (result,) = plain.run(["format"])
    assert result.tree_hash is None and not plain.format_changed_tree


def test_an_earlier_pass_on_the_same_bytes_stands_in_for_the_gate(project_dir):
    from stepkit.workspace.scope import tree_hash

    (project_dir / "app.py").write_text("x = 1\n")
    earlier = GateResult(
        name="tests",
        status="pass",
        command="exit 1",
        exit_code=0,
        evidence="1 passed",
        tree_hash=tree_hash(project_dir),
        started_at="2026-01-01T00:00:00+00:00",
    )
    ran, reused = [], []
    gates = runner(
        project_dir,
        commands_pm(tests="exit 1"),
        reusable=[earlier],
        reused_from="the coder",
        on_gate=ran.append,
        on_reused=lambda result, tree: reused.append((result.name, tree)),
    )
    (result,) = gates.run(["tests"])
    assert result.status == "pass" and ran == []  # "exit 1" would have failed
    assert reused == [("tests", earlier.tree_hash)]
    assert result.evidence == (
        f"[reused: same tree {earlier.tree_hash[:12]}, run at "
        "2026-01-01T00:00:00+00:00 by the coder]\n1 passed"
    )
    (project_dir / "app.py").write_text("x = 2\n")
    (changed,) = runner(project_dir, commands_pm(tests="exit 1"), reusable=[earlier]).run(["tests"])
    assert changed.status == "fail"
    (other_command,) = runner(project_dir, commands_pm(tests="exit 2"), reusable=[earlier]).run(
        ["tests"]
    )
    assert other_command.status == "fail"


def test_nothing_is_reused_once_the_formatter_changed_the_tree(project_dir):
    from stepkit.workspace.scope import tree_hash

    (project_dir / "app.py").write_text("x=1\n")
    earlier = GateResult(
        name="lint", status="pass", command="exit 1", tree_hash=tree_hash(project_dir)
    )
    gates = runner(
        project_dir,
        commands_pm(format=FORMAT_APP, lint="exit 1"),
        watch_format=True,
        reusable=[earlier],
    )
    assert [r.status for r in gates.run(["format", "lint"])] == ["pass", "fail"]
    (project_dir / "app.py").write_text("x=1\n")
    told = runner(
        project_dir, commands_pm(lint="exit 1"), reusable=[earlier], format_changed_tree=True
    )
    assert [r.status for r in told.run(["lint"])] == ["fail"]


def test_stamped_passes_carry_the_tree_they_left(project_dir):
    from stepkit.workspace.scope import file_ids, tree_hash

    gates = runner(
        project_dir, commands_pm(build="echo built > out.txt", tests="exit 1"), stamp_passes=True
    )
    build, tests = gates.run(["build", "tests"])
    assert build.tree_hash == tree_hash(project_dir) and tests.tree_hash is None
    assert gates.tree_ids is None  # the last gate failed
    gates = runner(
        project_dir, commands_pm(build="exit 1", tests="echo 1 passed in 0.01s"), stamp_passes=True
    )
    build, tests = gates.run(["build", "tests"])
    assert build.tree_hash is None and gates.tree_ids == file_ids(project_dir)


#: A formatter as pre-commit runs one: it rewrites app.py and exits 1 when it changed a byte.
REWRITES_AND_FAILS = (
    f"{sys.executable} -c \"import sys, pathlib; p = pathlib.Path('app.py'); "
    "old = p.read_text(); p.write_text('x = 1\\\\n'); sys.exit(old != 'x = 1\\\\n')\""
)


@pytest.mark.parametrize("watch_format", [True, False])
def test_a_formatter_that_exits_1_because_it_rewrote_files_passes_when_run_again(
    project_dir, watch_format
):
    (project_dir / "app.py").write_text("x=1\n")
    gates = runner(project_dir, commands_pm(format=REWRITES_AND_FAILS), watch_format=watch_format)
    (result,) = gates.run(["format"])
    assert result.status == "pass", result.summary
    assert "run again on what it wrote, it passed" in result.evidence
    assert (project_dir / "app.py").read_text() == "x = 1\n"


def test_a_formatter_that_fails_again_on_its_own_output_fails(project_dir):
    """A variant: a formatter that rewrites and still fails (a file it cannot parse)."""
    (project_dir / "app.py").write_text("x=1\n")
    always = (
        f'{sys.executable} -c "import pathlib, sys; '
        "pathlib.Path('app.py').write_text('y'); sys.exit(1)\""
    )
    (result,) = runner(project_dir, commands_pm(format=always)).run(["format"])
    assert result.status == "fail"
