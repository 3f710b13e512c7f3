"""The progress a person sees: one line per stage with its result, its time
and the run's running total of time, tokens and cost; each gate's verdict;
never the graph's routing nodes (``--verbose`` shows those:
tests/e2e/test_e2e_terminal.py).  On a real terminal emulator (tmux), on a
step that passes and on one that fails, and in plain lines without one."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from tests.support.e2e import PY, WRONG_MUL, clean_env, make_project
from tests.support.tmux import Tmux

ROUTING = ("resolve_step", "route_", "fix_loop_gate", "note_llm_fault", "revise_from_choice")
STAGE = r"✓ {name} +{result}\d+\.\d+s · run \d\d:\d\d\.\d · \d[\d,]* tokens · \$\d+\.\d{{4}}"


@pytest.fixture
def socket():
    # a unix socket's path is short (108 bytes): not under pytest's tmp_path
    with tempfile.TemporaryDirectory(prefix="sk-tmux-") as where:
        yield Path(where) / "s"


def stage(name: str, result: str = "") -> str:
    return STAGE.format(name=name, result=re.escape(result + " ") if result else "")


def test_a_step_on_a_terminal_shows_its_stages_and_gates_then_asks(tmp_path, socket):
    project = make_project(tmp_path)
    term = Tmux([PY, "-m", "stepkit", *project.run_args()], project.root, project.env(), socket)
    try:
        screen = term.wait_for(r"Options: approve / revise .*\n> ?$")
        progress = screen.split("Step 1 (Add mul) is implemented and verified.")[0]
        for line in (
            stage("orient"),
            stage("implement", "CODER_COMPLETE"),
            r"  gate lint: PASS \(`",
            r"  gate build: PASS \(`",
            r"  gate tests: PASS \(`[\s\S]*2\s+passed",
            stage("sweep"),
            stage("handoff"),
        ):
            assert re.search(line, progress), f"{line!r} not in:\n{progress}"
        assert not any(name in progress for name in ROUTING), progress
        term.type("approve")
        assert term.exit_code() == 0
        assert re.search(r"run \S+: STEP_COMPLETE \(exit 0\)", term.screen())
    finally:
        term.close()


@pytest.mark.slow
def test_a_failing_step_on_a_terminal_shows_each_round_and_what_to_do_next(tmp_path, socket):
    project = make_project(tmp_path)
    project.coder_actions({"write": {"calc.py": WRONG_MUL}, "sentinel": "CODER_COMPLETE"})
    argv = [PY, "-m", "stepkit", *project.run_args("--set", "max_fix_attempts=1")]
    term = Tmux(argv, project.root, project.env(), socket)
    try:
        assert term.exit_code() == 1
        screen = term.screen()
    finally:
        term.close()
    progress = screen.split("\nSTEP_FAILED\n")[0]
    assert len(re.findall(stage("implement", "CODER_COMPLETE"), progress)) == 2, progress
    assert progress.count("gate tests: FAIL") == 2, progress
    assert not any(name in progress for name in ROUTING), progress
    assert "Next:\n  stepkit undo " in screen


@pytest.mark.slow
def test_without_a_terminal_the_same_lines_are_plain(tmp_path):
    project = make_project(tmp_path)
    result = project.run(json_out=False)
    assert result.code == 5 and "\x1b[" not in result.stderr
    lines = result.stderr.splitlines()
    assert re.fullmatch(r"\[\d\d:\d\d\.\d\] " + stage("orient").replace(" +", " "), lines[0])
    assert "  gate tests: PASS (`" in result.stderr
    assert not any(name in result.stderr for name in ROUTING), result.stderr
    assert not any(line.endswith(" started") for line in lines)


@pytest.mark.slow
def test_the_demo_on_a_terminal_shows_stages_then_the_question_at_a_glance(tmp_path, socket):
    env = {**clean_env(), "TMPDIR": str(tmp_path)}  # the demo's copy lands in the test's dir
    term = Tmux([PY, "-m", "stepkit", "demo"], tmp_path, env, socket)
    try:
        screen = term.wait_for(r"Options: approve / revise .*\n> ?$")
        for line in (stage("orient"), stage("implement", "CODER_COMPLETE"), stage("handoff")):
            assert re.search(line, screen), f"{line!r} not in:\n{screen}"
        assert re.search(r"  gate tests: PASS", screen), screen
        assert not any(name in screen.split("gate_user_review")[0] for name in ROUTING), screen
        term.type("approve")
        assert term.exit_code() == 0
        assert "STEP_COMPLETE" in term.screen()
    finally:
        term.close()
