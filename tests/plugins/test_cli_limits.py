"""A subscription CLI that answers with a usage or rate limit is an
environment fault naming when the limit resets (when the CLI says so):
never a code failure, never a fix attempt.  The messages are those of
tests/fixtures/limits/ (see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.plugins.coders.presets import PRESETS
from stepkit.records import StageFault
from stepkit.workspace.process import ProcessResult
from tests.support import fake_cli
from tests.support.e2e import make_project

LIMITS = Path(__file__).resolve().parents[1] / "fixtures" / "limits"
CLAUDE = json.loads((LIMITS / "claude.json").read_text())
CODEX = json.loads((LIMITS / "codex.json").read_text())


def outputs(cli: str) -> list[tuple[str, str]]:
    """(the CLI's output, what stepkit must say about the reset) per case."""
    if cli == "claude":
        return [(json.dumps(case["result"]), case["resets"]) for case in CLAUDE]
    return [("\n".join(map(json.dumps, case["events"])), case["resets"]) for case in CODEX]


CASES = [(cli, output, resets) for cli in ("claude", "codex") for output, resets in outputs(cli)]


def ran(output: str, exit_code: int = 1) -> ProcessResult:
    return ProcessResult(
        command="x",
        exit_code=exit_code,
        expired=None,
        start_error=None,
        output=output,
        lines=output.count("\n"),
        size=len(output),
        duration_s=1.0,
        log=None,
    )


@pytest.mark.parametrize("cli, output, resets", CASES)
def test_a_coder_cli_at_its_limit_is_an_environment_fault_naming_the_reset(
    cli, output, resets, tmp_path
):
    result = PRESETS[cli].parse(ran(output), None, tmp_path)
    assert result.crashed and result.sentinel is None  # the run fails at once: no fix attempt
    assert resets in result.text
    assert "an environment fault, not a failure of the code" in result.text


@pytest.mark.parametrize("cli, output, resets", CASES)
def test_a_reviewer_cli_at_its_limit_is_a_fault_not_findings(cli, output, resets, tmp_path, fp):
    from stepkit.plugins.coders.reviewer import stepkit_review
    from tests.support.coder import make_ctx
    from tests.support.gitrepo import init_repo

    fp.allow_unregistered(True)  # git runs for real
    project = init_repo(tmp_path / "project", {"a.py": "x = 1\n"})
    fp.register([cli, fp.any()], stdout=output, returncode=1)
    ctx = make_ctx(project, reviewer=cli)
    ctx.node = "independent_review"
    review = stepkit_review(ctx)
    assert (
        review.review_report == ""
        and resets in review.fault
        and "environment fault" in review.fault
    )


@pytest.fixture
def cli_bin(tmp_path, monkeypatch):
    def install(name: str) -> Path:
        state = tmp_path / f"{name}-state"
        fake_cli.install(tmp_path / "bin", name, state)
        monkeypatch.setenv("PATH", fake_cli.path_with(tmp_path / "bin"))
        return state

    return install


@pytest.mark.parametrize("cli, output, resets", CASES)
def test_an_engine_cli_at_its_limit_is_a_fault_naming_the_reset(
    cli, output, resets, tmp_path, cli_bin
):
    from pydantic import BaseModel

    from stepkit.plugins.llm.engine import make_engine

    class Answer(BaseModel):
        plan_summary: str

    state = cli_bin(cli)
    fake_cli.script(state, {"lines": output.splitlines(), "exit": 1})
    ctx = fake_cli.stage_context(tmp_path, cli)
    with pytest.raises(StageFault) as fault:
        make_engine(cli, ctx).structured(
            node="orient", system="s", prompt="p", schema=Answer, tools=None, ctx=ctx
        )
    assert (
        resets in fault.value.note
        and "an environment fault, not a failure of the code" in fault.value.note
    )


def test_a_whole_step_whose_coder_hits_its_limit_fails_without_a_fix_attempt(tmp_path, cli_bin):
    state = cli_bin("claude")
    fake_cli.script(state, {"lines": [json.dumps(CLAUDE[1]["result"])], "exit": 1})
    project = make_project(tmp_path, reviewer=False)
    project.allow_writes(state)  # the fake CLI's record of its calls, in the sandbox
    result = project.run(
        "--step", "1", coder="claude", env=project.env(PATH=fake_cli.path_with(tmp_path / "bin"))
    )
    assert result.outcome == "STEP_FAILED", result.stderr + result.stdout
    assert "it resets at 3pm (Europe/Berlin)" in result.output
    assert "an environment fault, not a failure of the code" in result.output
    assert result.data["fix_attempts"] == 0 and len(fake_cli.calls(state)) == 1
