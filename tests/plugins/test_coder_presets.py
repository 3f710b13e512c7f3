"""Coder presets: contract tests on transcripts of the real CLIs.

Every fixture under tests/fixtures/transcripts/<cli>-<version>/ is one run
of the real tool at that version, recorded through the preset's own command
line, environment and runner against a loopback API
(``python -m tests.realcli.record``): its exit code, its output as stepkit
reads it and what it wrote into its scratch dir.  The command lines and the
runner are driven with pytest-subprocess (``fp``) and real processes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.plugins.agent_clis import STATE, UNSAVED, state_path
from stepkit.plugins.coders.command import stepkit_implement
from stepkit.plugins.coders.presets import PRESETS
from stepkit.plugins.coders.presets.base import Call
from stepkit.records import Usage
from stepkit.workspace.process import ProcessResult
from tests.support.coder import make_ctx
from tests.support.gitrepo import git

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def transcript(cli: str, scenario: str) -> dict:
    version = PRESETS[cli].checked[-1]
    return json.loads((TRANSCRIPTS / f"{cli}-{version}" / f"{scenario}.json").read_text())


def replay(cli: str, scenario: str, tmp_path: Path, said: str | None = None):
    """The preset's reading of a recorded run: (CoderResult, Parsed);
    ``said``: what the model wrote in place of its sentinel."""
    t = transcript(cli, scenario)
    if said is not None:  # JSON-escaped in the CLI's JSON lines
        escaped = json.dumps(said)[1:-1]
        t["output"] = "".join(
            line.replace("CODER_COMPLETE", escaped if line.lstrip().startswith("{") else said)
            for line in t["output"].splitlines(keepends=True)
        )
        t["scratch_files"] = {
            name: text.replace("CODER_COMPLETE", said) for name, text in t["scratch_files"].items()
        }
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    for name, text in t["scratch_files"].items():
        (scratch / name).write_text(text)
    run = ProcessResult(
        command=t["command"],
        exit_code=t["exit_code"],
        expired=t["expired"],
        start_error=None,
        output=t["output"],
        lines=t["output"].count("\n"),
        size=len(t["output"]),
        duration_s=1.0,
        log=None,
    )
    preset = PRESETS[cli]
    return preset.parse(run, None, scratch), preset.read(t["output"], scratch)


def call(tmp_path: Path, review: bool = False, **settings) -> Call:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return Call(settings, review, project, tmp_path / "scratch")


@pytest.mark.parametrize("cli", list(PRESETS))
def test_every_preset_names_the_versions_it_was_checked_against_and_has_their_transcripts(cli):
    preset = PRESETS[cli]
    assert preset.checked and preset.install
    for version in preset.checked:
        assert (TRANSCRIPTS / f"{cli}-{version}" / "success.json").is_file()


@pytest.mark.parametrize("cli", list(PRESETS))
def test_success_with_its_tokens_and_cost(cli, tmp_path):
    result, _ = replay(cli, "success", tmp_path)
    assert result.sentinel == "CODER_COMPLETE" and not result.sentinel_inferred
    assert "Added greet() in greet.py." in result.text
    assert (
        result.usage is not None
        and result.usage.output_tokens > 0
        and result.usage.input_tokens > 0
    )
    if cli == "codex":
        assert result.cost_usd is None  # codex reports tokens, not cost
    else:
        assert result.cost_usd and result.usage.cost_usd == pytest.approx(result.cost_usd)
    assert result.session_id or cli == "aider"


def test_token_counts_as_each_cli_reports_them(tmp_path):
    claude = replay("claude", "success", tmp_path)[0].usage
    # claude's usage: the three requests summed; cache tokens apart
    assert (claude.cache_read_tokens, claude.cache_write_tokens) == (500, 100)
    codex = replay("codex", "success", tmp_path)[0].usage
    # codex's input_tokens include the cached ones
    assert codex.cache_read_tokens == 300 and codex.input_tokens == 1100 - 300
    aider = replay("aider", "success", tmp_path)[0].usage
    assert aider == Usage(
        input_tokens=1300,
        output_tokens=30,
        cache_read_tokens=500,
        cache_write_tokens=100,
        cost_usd=aider.cost_usd,
    )
    opencode = replay("opencode", "success", tmp_path)[0].usage
    assert opencode.cache_read_tokens == 500 and opencode.cost_usd > 0


@pytest.mark.parametrize("cli", list(PRESETS))
@pytest.mark.parametrize(
    "said, sentinel, reason",
    [
        ("CODER_FAILED: tests still red", "CODER_FAILED", "tests still red"),
        ("CODER_FAILED: tests still red\n\nAll done, it works.", "CODER_FAILED", "tests still red"),
        ("**CODER_REJECTED** - out of scope", "CODER_REJECTED", "out of scope"),
        ("CODER_COMPLETE\n\nOn second thought:\nCODER_FAILED", "CODER_FAILED", None),
    ],
)
def test_a_sentinel_line_and_its_reason_are_read_from_every_cli_s_final_text(
    cli, said, sentinel, reason, tmp_path
):
    result, _ = replay(cli, "success", tmp_path, said=said)
    assert (result.sentinel, result.sentinel_reason) == (sentinel, reason), result.text
    assert not result.sentinel_inferred


@pytest.mark.parametrize("cli", list(PRESETS))
def test_an_api_failure_is_failed_with_the_tools_own_reason(cli, tmp_path):
    result, _ = replay(cli, "failure", tmp_path)
    assert result.sentinel == "CODER_FAILED" and not result.crashed
    assert "error: " in result.text


def test_claude_api_error_is_labelled_by_its_status_not_its_subtype(tmp_path):
    # the real result: subtype "success", is_error true, api_error_status 400
    result, _ = replay("claude", "failure", tmp_path)
    assert "error: API error 400: API Error: 400" in result.text
    assert "success:" not in result.text


@pytest.mark.parametrize("cli", list(PRESETS))
def test_a_transient_error_that_was_retried_is_no_failure(cli, tmp_path):
    result, _ = replay(cli, "retried", tmp_path)
    assert result.sentinel == "CODER_COMPLETE", result.text
    assert "error: " not in result.text


def test_codex_retry_notice_and_warning_items_are_notes_not_errors(tmp_path):
    result, parsed = replay("codex", "retried_notice", tmp_path)
    assert result.sentinel == "CODER_COMPLETE"
    assert parsed.errors == ()
    assert any(n.startswith("retried: Reconnecting... 1/1") for n in parsed.notes)
    assert any("Model metadata for `gpt-test` not found" in n for n in parsed.notes)


def test_codex_error_then_turn_failed_is_failed(tmp_path):
    result, parsed = replay("codex", "failure", tmp_path)
    assert result.sentinel == "CODER_FAILED"
    assert "no response queued" in parsed.errors[-1]


def test_aider_retried_litellm_error_is_a_note(tmp_path):
    result, parsed = replay("aider", "retried", tmp_path)
    assert parsed.errors == ()
    assert parsed.notes[0].startswith("retried: litellm.InternalServerError")
    assert "[aider: retried: litellm.InternalServerError" in result.text


def test_aider_edits_that_never_applied_are_failed_even_when_the_reply_says_complete(tmp_path):
    result, parsed = replay("aider", "bad_edits", tmp_path)
    assert "CODER_COMPLETE" in parsed.text
    assert result.sentinel == "CODER_FAILED"
    assert "Only 3 reflections allowed, stopping." in result.text
    assert "its reply said CODER_COMPLETE" in result.text


def test_aider_ending_on_an_error_after_its_reply_is_failed(tmp_path):
    # the reply named a file not in the chat; aider added it, asked again, and that request failed
    result, parsed = replay("aider", "error_after_reply", tmp_path)
    assert "CODER_COMPLETE" in parsed.text
    assert result.sentinel == "CODER_FAILED"
    assert "ended on an error after its last reply (litellm.BadRequestError" in result.text


def test_aider_answer_is_the_models_reply_only_once(tmp_path):
    _, parsed = replay("aider", "review", tmp_path)
    assert parsed.text == "🟡 greet.py: greet() has no test.\n🟢 greet.py: fine otherwise."


@pytest.mark.parametrize("cli", list(PRESETS))
def test_a_killed_cli_crashed(cli, tmp_path):
    result, _ = replay(cli, "killed", tmp_path)
    assert result.crashed
    assert "timed out after 8 s" in result.text


def test_claude_denied_permissions_are_noted_not_failures(tmp_path):
    result, parsed = replay("claude", "review_denied", tmp_path)
    assert result.sentinel == "CODER_COMPLETE"
    assert parsed.notes == ("2 tool call(s) were denied permission (Bash, Write)",)
    assert transcript("claude", "review_denied")["git_status_after"] == ""


@pytest.mark.parametrize("cli", ["codex", "opencode"])
def test_a_read_only_reviewer_that_tried_to_write_wrote_nothing(cli, tmp_path):
    _, parsed = replay(cli, "review_denied", tmp_path)
    assert parsed.text == "🟢 No findings." and parsed.errors == ()
    assert transcript(cli, "review_denied")["git_status_after"] == ""


def test_opencode_auto_rejected_permission_with_no_answer_is_failed(tmp_path):
    result, parsed = replay("opencode", "outside_project", tmp_path)
    assert parsed.text == ""
    assert result.sentinel == "CODER_FAILED"
    assert "stopped after a tool call without answering" in result.text
    assert "external_directory" in parsed.failed


def test_aider_leaves_no_repository_ignore_file_or_cache_and_stages_nothing():
    outside = transcript("aider", "success_no_git")
    assert "--no-git" in outside["command"] and outside["dot_files_after"] == []
    inside = transcript("aider", "success")
    assert inside["dot_files_after"] == [".git"]  # no .gitignore, no .aider.tags.cache
    assert inside["git_status_after"] == "?? greet.py\n"  # the new file is not git-added


# -- command lines ---------------------------------------------------------------


def test_claude_coder_may_run_commands_and_its_budget_is_what_the_run_has_left(tmp_path):
    line = PRESETS["claude"].command(call(tmp_path))
    assert line == (
        "claude -p --output-format json --permission-mode acceptEdits --allowedTools Bash "
        "--max-turns 60 --max-budget-usd 10"
    )
    spent = Call(
        {"max_cost_usd": 5, "coder_max_turns": 12}, False, tmp_path, tmp_path, Usage(cost_usd=3.75)
    )
    assert PRESETS["claude"].command(spent).endswith("--max-turns 12 --max-budget-usd 1.25")


def test_reviewer_variants_are_read_only(tmp_path):
    review = {name: preset.command(call(tmp_path, review=True)) for name, preset in PRESETS.items()}
    assert "--permission-mode plan" in review["claude"] and "Bash" not in review["claude"]
    assert "--sandbox read-only" in review["codex"]
    assert review["aider"].endswith("--dry-run --chat-mode ask --map-tokens 0")
    assert review["opencode"] == "opencode run --format json --agent plan"
    assert json.loads(
        PRESETS["opencode"].env(call(tmp_path, review=True))["OPENCODE_PERMISSION"]
    ) == {"edit": "deny", "bash": "deny"}


def test_aider_keeps_its_files_in_the_scratch_dir_and_git_add_in_a_throwaway_index(tmp_path):
    c = call(tmp_path)
    c.scratch.mkdir()
    line = PRESETS["aider"].command(c)
    assert f"--chat-history-file {c.scratch}/chat.history.md" in line
    assert f"--input-history-file {c.scratch}/input.history" in line
    assert "--no-gitignore" in line and "--no-dirty-commits" in line and "--no-git" in line.split()
    assert PRESETS["aider"].env(c) == {}
    git(c.project_dir, "init", "-q")
    assert "--no-git" not in PRESETS["aider"].command(c).split()
    assert PRESETS["aider"].env(c) == {"GIT_INDEX_FILE": str(c.scratch / "index")}


def test_a_preset_session_removes_its_scratch_dir_and_the_cache_it_left(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    ctx = make_ctx(project, coder="aider")
    with PRESETS["aider"].session(ctx, review=False) as c:
        (project / ".aider.tags.cache.v4").mkdir()
        (project / ".aider.tags.cache.v4" / "cache.db").write_text("x")
        assert c.scratch.is_dir() and not c.scratch.is_relative_to(project)
    assert not c.scratch.exists()
    assert not (project / ".aider.tags.cache.v4").exists()


def test_the_preset_runs_through_the_runner_and_its_usage_is_the_runs(tmp_path, fp):
    project = tmp_path / "project"
    project.mkdir()
    t = transcript("claude", "success")
    fp.allow_unregistered(True)  # git, run for real
    fp.register(t["command"], stdout=t["output"])
    events: list = []
    ctx = make_ctx(project, coder="claude", events=events)
    result = stepkit_implement(ctx)
    assert result.sentinel == "CODER_COMPLETE"
    assert ctx.usage == result.usage and ctx.usage.cost_usd == pytest.approx(0.005775)
    kinds = [kind for kind, _ in events]
    assert kinds == ["delegate_started", "delegate_finished", "delegate_usage"]
    assert events[-1][1]["who"] == "coder-claude" and events[-1][1]["cache_read_tokens"] == 500


def test_a_preset_reviewers_usage_is_the_runs_too(tmp_path, fp):
    from stepkit.plugins.coders.reviewer import stepkit_review

    project = tmp_path / "project"
    project.mkdir()
    t = transcript("opencode", "review")
    fp.allow_unregistered(True)
    fp.register(t["command"], stdout=t["output"])
    events: list = []
    ctx = make_ctx(project, reviewer="opencode", events=events)
    assert stepkit_review(ctx).review_report.startswith("🟡 should fix: greet.py")
    assert ctx.usage.cost_usd > 0 and ctx.usage.input_tokens == 1200
    assert events[-1][0] == "delegate_usage" and events[-1][1]["who"] == "reviewer-opencode"


def test_plugins_json_lists_every_preset_with_its_cli_found_and_its_version(
    tmp_path, capsys, monkeypatch
):
    from stepkit.cli import main

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
    fake.chmod(0o755)
    old = bin_dir / "codex"
    old.write_text("#!/bin/sh\necho 'codex-cli 0.1.0'\n")
    old.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert main(["plugins", "--project-dir", str(tmp_path), "--json"]) == 0
    presets = {p["name"]: p for p in json.loads(capsys.readouterr().out)["presets"]}
    assert list(presets) == ["claude", "codex", "aider", "opencode"]
    assert presets["claude"] == {
        "name": "claude",
        "path": str(fake),
        "version": "2.1.332",
        "checked": ["2.1.332"],
        "checked_version": True,
        "install": "npm install -g @anthropic-ai/claude-code",
        "plugin": "stepkit.plugins.coders.presets",
        "overrides": [],
    }
    assert presets["codex"]["version"] == "0.1.0" and not presets["codex"]["checked_version"]
    assert presets["aider"]["path"] is None and presets["aider"]["version"] is None
    assert main(["plugins", "--project-dir", str(tmp_path)]) == 0
    table = capsys.readouterr().out
    assert "opencode  not on PATH (install: npm install -g opencode-ai)" in table
    assert "0.1.0 (" in table and "[not a checked version]" in table


def test_a_coding_cli_needs_some_budget_left_to_start(tmp_path, fp):
    from stepkit.records import StageFault

    project = tmp_path / "project"
    project.mkdir()
    fp.allow_unregistered(True)
    ctx = make_ctx(project, coder="claude", settings={"max_cost_usd": 2})
    ctx.usage = Usage(cost_usd=2.0)
    with pytest.raises(
        StageFault,
        match=r"budget exceeded: the run has spent \$2.0000 of max_cost_usd=2 "
        r"\(raise it with --set max_cost_usd=…\); coder-claude was not started",
    ):
        stepkit_implement(ctx)


def _declared(cli: str, kinds: tuple[dict, ...]) -> list[Path]:
    home = {"HOME": "/HOME"}  # the recorder's XDG variables name the same places in its home
    return [state_path(entry, home) for kind in kinds for entry in kind.get(cli, ())]


@pytest.mark.parametrize("cli", sorted(PRESETS))
def test_each_preset_declares_every_place_its_cli_wrote_in_the_home_directory(cli):
    """Every transcript of a coder was recorded in stepkit's sandbox with the
    whole home directory writable: wherever the CLI wrote there is declared
    writable state, or a rewrite the CLI works on without."""
    version = PRESETS[cli].checked[-1]
    declared = _declared(cli, (STATE, UNSAVED))
    coders = [
        t
        for path in sorted((TRANSCRIPTS / f"{cli}-{version}").glob("*.json"))
        for t in [json.loads(path.read_text())]
        if not t["review"]
    ]
    assert coders and all(t["confined"] for t in coders)
    written = {entry for t in coders for entry in t["home_writes"]}
    assert written, f"{cli} wrote nothing in its home directory: the recording saw nothing"
    for entry in written:
        path = Path("/HOME", entry)
        assert any(path == d or path.is_relative_to(d) for d in declared), (cli, entry)


def test_a_state_entry_follows_the_variable_the_cli_reads():
    assert state_path("${CODEX_HOME:-~/.codex}/", {"HOME": "/h"}) == Path("/h/.codex")
    assert state_path("${CODEX_HOME:-~/.codex}/", {"HOME": "/h", "CODEX_HOME": "/c"}) == Path("/c")
    # a relative value is no location the CLI would use either: the default holds
    xdg = "${XDG_DATA_HOME:-~/.local/share}/opencode/"
    assert state_path(xdg, {"HOME": "/h", "XDG_DATA_HOME": "d"}) == Path("/h/.local/share/opencode")
    assert state_path("${CLAUDE_CONFIG_DIR:-~}/.claude.json", {"HOME": "/h"}) == Path(
        "/h/.claude.json"
    )


def test_state_paths_are_created_where_the_variables_point(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    paths = PRESETS["opencode"].state_paths()
    assert paths == (
        tmp_path / "config" / "opencode",
        tmp_path / "home" / ".local" / "share" / "opencode",
        tmp_path / "home" / ".local" / "state" / "opencode",
    )
    assert all(p.is_dir() for p in paths)
