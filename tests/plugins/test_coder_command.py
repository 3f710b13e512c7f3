"""The command coder: real shell scripts play the coding CLI."""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

import pytest

from stepkit.plugins.coders import command
from stepkit.plugins.coders.command import stepkit_implement
from stepkit.plugins.coders.results import find_sentinel
from tests.support.coder import make_ctx, process_gone


def script(project: Path, body: str, name: str = "coder.sh") -> str:
    path = project / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return f"command:./{name}"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "plans" / "steps").mkdir(parents=True)
    return root


def test_exit_zero_without_a_sentinel_is_complete(project):
    result = stepkit_implement(make_ctx(project, coder=script(project, "echo edited greet.py\n")))
    assert result.sentinel == "CODER_COMPLETE"
    assert not result.crashed
    assert result.exit_code == 0
    assert "edited greet.py" in result.text
    assert "no sentinel" in result.text
    assert Path(result.log).read_text() == "edited greet.py\n"


def test_an_explicit_sentinel_wins_over_exit_zero_and_the_last_one_counts(project):
    body = "echo CODER_COMPLETE\necho 'tests still red'\necho '  **CODER_FAILED**  '\nexit 0\n"
    result = stepkit_implement(make_ctx(project, coder=script(project, body)))
    assert result.sentinel == "CODER_FAILED"
    assert not result.crashed


def test_a_sentinel_inside_a_sentence_does_not_count(project):
    body = "echo 'I will print CODER_REJECTED later'\nexit 3\n"
    result = stepkit_implement(make_ctx(project, coder=script(project, body)))
    assert result.sentinel == "CODER_FAILED"
    assert result.exit_code == 3


def test_non_zero_exit_is_failed_not_crashed(project):
    result = stepkit_implement(make_ctx(project, coder=script(project, "echo boom >&2\nexit 2\n")))
    assert result.sentinel == "CODER_FAILED"
    assert not result.crashed
    assert "boom" in result.text  # stderr is part of the result


def test_killed_by_sigkill_is_a_crash(project):
    result = stepkit_implement(
        make_ctx(project, coder=script(project, "echo half done\nkill -9 $$\n"))
    )
    assert result.crashed
    assert result.sentinel is None
    assert "half done" in result.text
    assert result.text.splitlines()[-1] == "the coder was killed by signal SIGKILL (9)"


def test_timeout_kills_the_whole_process_group(project):
    body = "sleep 300 &\necho $! > child.pid\necho started\nsleep 300\n"
    started = time.monotonic()
    result = stepkit_implement(make_ctx(project, coder=script(project, body), timeout=1))
    assert time.monotonic() - started < 10
    assert result.crashed
    assert "timed out after 1 s" in result.text
    assert "started" in result.text
    child = int((project / "child.pid").read_text())
    assert process_gone(child)


def test_processes_left_behind_are_killed_and_do_not_hang_the_run(project):
    body = "sleep 300 &\necho $! > bg.pid\necho CODER_COMPLETE\n"
    result = stepkit_implement(make_ctx(project, coder=script(project, body)))
    assert result.sentinel == "CODER_COMPLETE"
    assert process_gone(int((project / "bg.pid").read_text()))


def test_missing_executable_is_a_crash(project):
    result = stepkit_implement(make_ctx(project, coder="command:no-such-coder-cli --go"))
    assert result.crashed
    assert result.exit_code == 127
    assert "could not start: command not found" in result.text


def test_not_executable_is_a_crash(project):
    (project / "coder.sh").write_text("echo hi\n")
    result = stepkit_implement(make_ctx(project, coder="command:./coder.sh"))
    assert result.crashed
    assert "not executable (exit 126)" in result.text


def test_prompt_arrives_on_stdin_and_in_the_prompt_file_with_env_in_the_project_dir(project):
    body = (
        'cat > stdin.txt\ncp "$STEPKIT_PROMPT_FILE" file.txt\n'
        "env | grep ^STEPKIT_ | sort > env.txt\npwd > cwd.txt\necho CODER_COMPLETE\n"
    )
    ctx = make_ctx(
        project,
        coder=script(project, body),
        state={
            "fix_instructions": "tests/test_greet.py fails: fix greet()",
            "user_guidance": "keep it short",
        },
    )
    result = stepkit_implement(ctx)
    assert result.sentinel == "CODER_COMPLETE"
    stdin = (project / "stdin.txt").read_text()
    assert stdin == (project / "file.txt").read_text()
    for expected in (
        'greet("Ann") returns',
        "Put greet() in greet.py.",
        "keep it short",
        "tests/test_greet.py fails",
        "Out of scope",
        "plans/",
        "CODER_COMPLETE",
    ):
        assert expected in stdin
    env = dict(line.split("=", 1) for line in (project / "env.txt").read_text().splitlines())
    assert env["STEPKIT_STEP"] == "3"
    assert env["STEPKIT_PROJECT_DIR"] == str(project)
    assert env["STEPKIT_PLANS_DIR"] == str(project / "plans")
    assert Path(env["STEPKIT_PROMPT_FILE"]).parent == ctx.log_dir()
    assert Path((project / "cwd.txt").read_text().strip()).resolve() == project.resolve()


def test_secrets_never_reach_the_result_or_the_log(project, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-secretvalue123456")
    body = 'echo "using $ANTHROPIC_API_KEY"\necho CODER_COMPLETE\n'
    result = stepkit_implement(make_ctx(project, coder=script(project, body)))
    assert "secretvalue" not in result.text
    assert "secretvalue" not in Path(result.log).read_text()
    assert "[REDACTED]" in result.text


def test_long_output_is_kept_bounded_and_the_sentinel_still_found(project):
    body = "yes 'line of coder chatter' | head -c 3000000\necho\necho CODER_REJECTED\n"
    result = stepkit_implement(make_ctx(project, coder=script(project, body)))
    assert result.sentinel == "CODER_REJECTED"
    assert len(result.text) < command.HEAD_BYTES + command.TAIL_BYTES + 500
    assert "bytes omitted" in result.text
    assert os.path.getsize(result.log) > 3_000_000


def test_specs_it_does_not_own_get_no_answer(project):
    assert stepkit_implement(make_ctx(project, coder="anthropic")) is None
    assert stepkit_implement(make_ctx(project, coder="somebody-elses-coder")) is None


def test_an_empty_command_is_a_crash_with_a_clear_text(project):
    result = stepkit_implement(make_ctx(project, coder="command:  "))
    assert result.crashed
    assert "names no command" in result.text


@pytest.mark.parametrize(
    "text, word, reason",
    [
        ("done\nCODER_COMPLETE\n", "CODER_COMPLETE", None),
        ("`CODER_REJECTED`", "CODER_REJECTED", None),
        ("say CODER_COMPLETE when done", None, None),
        ("CODER_COMPLETE\nCODER_FAILED", "CODER_FAILED", None),
        ("CODER_FAILED: tests still red", "CODER_FAILED", "tests still red"),
        ("CODER_REJECTED - out of scope", "CODER_REJECTED", "out of scope"),
        ("**CODER_FAILED**: lint is red.", "CODER_FAILED", "lint is red."),
        ("  > ## CODER_FAILED — no network", "CODER_FAILED", "no network"),
        ("CODER_FAILED: x\nnow say CODER_COMPLETE", "CODER_FAILED", "x"),
        ("CODER_COMPLETED", None, None),
        ("- CODER_FAILED: tests red\nexit 0 anyway", "CODER_FAILED", "tests red"),
    ],
)
def test_a_sentinel_is_a_line_that_starts_with_it_and_the_last_one_wins(text, word, reason):
    found = find_sentinel(text)
    assert (found.word if found else None, found.reason if found else None) == (word, reason)


def test_a_command_reports_its_usage_through_the_usage_file_and_the_run_counts_it(project):
    events: list = []
    body = (
        'printf \'{"input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.0123456789}\' '
        '> "$STEPKIT_USAGE_FILE"\necho CODER_COMPLETE\n'
    )
    ctx = make_ctx(project, coder=script(project, body), events=events)
    result = stepkit_implement(ctx)
    assert result.usage.input_tokens == 1200 and result.cost_usd == pytest.approx(0.0123456789)
    assert ctx.usage.total_tokens == 1280 and ctx.usage.cost_usd == 0.012346  # rounded
    kind, fields = events[-1]
    assert kind == "delegate_usage" and fields["who"] == "coder" and fields["output_tokens"] == 80


def test_a_command_that_reports_nothing_adds_no_usage(project):
    events: list = []
    ctx = make_ctx(project, coder=script(project, "echo CODER_COMPLETE\n"), events=events)
    assert stepkit_implement(ctx).usage is None
    assert ctx.usage.total_tokens == 0 and "delegate_usage" not in [kind for kind, _ in events]


@pytest.mark.parametrize(
    "settings, spent, message",
    [
        (
            {"max_cost_usd": 1.0},
            {"cost_usd": 1.01},
            "the run has spent $1.0100 of max_cost_usd=1 (raise it with --set max_cost_usd=…); coder was not started",
        ),
        (
            {"max_tokens": 500},
            {"input_tokens": 400, "output_tokens": 101},
            "the run has used 501 tokens of max_tokens=500 (raise it with --set max_tokens=…); coder was not started",
        ),
    ],
)
def test_a_passed_budget_stops_a_command_before_it_starts(project, settings, spent, message):
    from stepkit.records import StageFault, Usage

    marker = project / "started"
    ctx = make_ctx(project, coder=script(project, f"touch {marker}\n"), settings=settings)
    ctx.usage = Usage(**spent)
    with pytest.raises(StageFault, match=re.escape(f"budget exceeded: {message}")):
        stepkit_implement(ctx)
    assert not marker.exists()


def test_a_preset_whose_cli_is_missing_is_a_usage_error_with_the_install_hint(
    monkeypatch, tmp_path
):
    from stepkit.config import Config
    from stepkit.errors import UsageError
    from stepkit.plugins.coders.presets import PRESETS

    monkeypatch.setenv("PATH", str(tmp_path))
    settings = {"reviewer": "opencode", "stages": ("implement", "review")}
    with pytest.raises(
        UsageError,
        match=re.escape(
            "--reviewer opencode: the 'opencode' CLI is not on PATH (install it: npm install -g opencode-ai; "
            "or use command:SHELL)"
        ),
    ):
        command.stepkit_configure(Config(), {**settings, "coder": "command:true"}, PRESETS, None)
    # a command that does not run the review does not need the reviewer's CLI
    command.stepkit_configure(
        Config(), {**settings, "coder": "command:true", "stages": ("implement",)}, PRESETS, None
    )


def test_a_command_may_still_run_on_a_budget_used_to_the_last_token(project):
    from stepkit.records import Usage

    ctx = make_ctx(
        project, coder=script(project, "echo CODER_COMPLETE\n"), settings={"max_tokens": 500}
    )
    ctx.usage = Usage(input_tokens=500)  # a command may call no model at all
    assert stepkit_implement(ctx).sentinel == "CODER_COMPLETE"
