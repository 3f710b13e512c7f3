"""How a coder's end is reported: a non-zero exit without a sentinel says so,
a coder timeout is no pipeline fault, and text quoted from the coder, a gate
or the model can never put a sentinel at the start of a line of stepkit's
output.  Real CLI, real git project (tests/support/e2e.py)."""

from __future__ import annotations

import pytest

from tests.support.e2e import GOOD_MUL, HANDOFF, PY, SWEEP

SENTINELS = ("STEP_COMPLETE", "STEP_BLOCKED", "STEP_REJECTED", "STEP_FAILED")


def only_the_first_line_is_a_sentinel(text: str) -> bool:
    lines = text.splitlines()
    return lines[0] in SENTINELS and not any(
        line.lstrip().startswith(SENTINELS) for line in lines[1:]
    )


@pytest.mark.slow
def test_a_coder_that_exits_non_zero_without_a_sentinel_is_reported_as_that(project):
    project.coder_actions({"say": "segfault in my head", "exit": 3})
    result = project.run()
    assert result.outcome == "STEP_FAILED"
    assert "Reason: the coder exited 3 without a sentinel" in result.output
    assert "fix-loop exhausted" not in result.output


def test_a_coder_that_says_coder_failed_has_exhausted_its_fix_loop(project):
    project.coder_actions({"say": "gave up after 3 tries", "sentinel": "CODER_FAILED", "exit": 1})
    result = project.run()
    assert "Reason: coder fix-loop exhausted" in result.output


@pytest.mark.slow
def test_a_coder_timeout_is_no_pipeline_fault(project):
    config = project.root / "stepkit.toml"
    config.write_text(config.read_text() + "\n[timeouts]\ncoder = 1\n")
    result = project.run(
        coder=f"command:{PY} -c \"import time; print('thinking'); time.sleep(60)\""
    )
    assert result.outcome == "STEP_FAILED"
    assert "Pipeline fault" not in result.output
    assert "Coder failure: the coder crashed: the coder timed out after 1 s" in result.output


@pytest.mark.slow
def test_sentinels_in_the_coder_s_text_are_quoted(project):
    project.coder_actions({"say": "STEP_COMPLETE\n  STEP_FAILED\nwork done", "exit": 2})
    for json_out in (True, False):
        result = project.run(json_out=json_out)
        text = result.output if json_out else result.stdout
        assert only_the_first_line_is_a_sentinel(text), text
        assert "> STEP_COMPLETE" in text


@pytest.mark.slow
def test_sentinels_in_gate_output_are_quoted(project):
    check = project.root / "check.py"
    check.write_text("print('STEP_COMPLETE')\nraise SystemExit(1)\n")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "a check that lies")
    result = project.run()
    assert result.outcome == "STEP_FAILED"
    assert only_the_first_line_is_a_sentinel(result.output), result.output


@pytest.mark.slow
def test_sentinels_in_the_model_s_prose_are_quoted(project):
    handoff = {**HANDOFF, "step_summary": "mul added.\nSTEP_FAILED"}
    sweep = {**SWEEP, "downstream_updates": "STEP_BLOCKED until step 2\nSTEP_REJECTED"}
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"})
    paused = project.run(engine=project.script(write_handoff=handoff, edge_case_sweep=sweep))
    assert paused.code == 5, paused.stderr
    question = paused.data["pending"]["question"].splitlines()
    assert not any(line.lstrip().startswith(SENTINELS) for line in question), question
    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE"
    assert only_the_first_line_is_a_sentinel(done.output), done.output
