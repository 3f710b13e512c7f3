"""``stepkit doctor`` proves each coding CLI the run would use is logged in
by the dry call the CLI offers (``claude auth status``, ``codex login
status``, ``opencode auth list``), answered by the suite's fake CLIs as the
real ones answer (tests/support/recorded/login/); an API key the CLI reads
counts as ready; aider has no login and the line names its keys.  Real
``stepkit doctor`` processes."""

from __future__ import annotations

import json

import pytest

from tests.support import fake_cli
from tests.support.e2e import make_project

KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY", "OPENROUTER_API_KEY")


def doctor(project, tmp_path, *args, **env):
    """doctor's lines by name (``--json``), the fakes first on PATH, no API key
    in the environment unless given."""
    base = project.env(PATH=fake_cli.path_with(tmp_path / "bin"))
    for key in KEYS:
        base.pop(key, None)
    done = project.stepkit(
        "doctor", "--engine", f"scripted:{project.script()}", *args, env={**base, **env}
    )
    report = json.loads(done.stdout)
    assert report["ok"] is (done.code == 0), done.stdout
    return done.code, {c["name"]: c for c in report["checks"]}


@pytest.mark.slow
def test_a_logged_out_coder_fails_and_logging_in_passes(tmp_path):
    project = make_project(tmp_path)
    state = tmp_path / "claude-state"
    fake_cli.install(tmp_path / "bin", "claude", state)

    code, checks = doctor(project, tmp_path, "--coder", "claude")
    assert code == 1
    assert checks["claude"] == {
        "name": "claude",
        "status": "fail",
        "text": "not logged in (claude auth status)",
        "fix": "run `claude auth login` (or set ANTHROPIC_API_KEY)",
    }
    assert checks["engine"]["status"] == "ok", "on PATH is all a run checks before it starts"
    assert fake_cli.probes(state) == [{"argv": ["auth", "status"], "stdin": "", "tty": False}]

    fake_cli.login(state, True)
    code, checks = doctor(project, tmp_path, "--coder", "claude")
    assert code == 0
    assert (checks["claude"]["status"], checks["claude"]["text"]) == (
        "ok",
        "logged in (claude auth status)",
    )


def test_an_api_key_the_cli_reads_is_ready_whatever_the_login_says(tmp_path):
    project = make_project(tmp_path)
    state = tmp_path / "codex-state"
    fake_cli.install(tmp_path / "bin", "codex", state)
    code, checks = doctor(project, tmp_path, "--coder", "codex", CODEX_API_KEY="sk-test")
    assert code == 0
    assert checks["codex"]["text"] == "CODEX_API_KEY is set, which it reads as its API key"


def test_one_line_per_cli_whether_it_codes_reviews_or_is_the_engine(tmp_path):
    """``--engine codex`` runs the codex preset's CLI: its login is checked
    once, with the reviewer's; the coder's CLI has its own line."""
    project = make_project(tmp_path)
    for name in ("claude", "codex"):
        fake_cli.install(tmp_path / "bin", name, tmp_path / f"{name}-state")
    fake_cli.login(tmp_path / "claude-state", True)
    done = project.stepkit(
        "doctor",
        "--engine",
        "codex",
        "--coder",
        "claude",
        "--reviewer",
        "codex",
        env=project.env(PATH=fake_cli.path_with(tmp_path / "bin")),
        json_out=False,
    )
    assert done.code == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "✓ claude: logged in (claude auth status)" in lines
    at = lines.index("✗ codex: not logged in (codex login status)")
    assert lines[at + 1] == "    fix: run `codex login` (or set CODEX_API_KEY or OPENAI_API_KEY)"
    assert len([line for line in lines if line.startswith("✗ codex:")]) == 1
    assert len(fake_cli.probes(tmp_path / "codex-state")) == 1


def test_opencode_counts_its_credentials_and_keys_and_none_is_a_warning(tmp_path):
    project = make_project(tmp_path)
    fake_cli.install(tmp_path / "bin", "opencode", tmp_path / "opencode-state")
    code, checks = doctor(project, tmp_path, "--coder", "opencode")
    assert code == 0, "opencode's free models need no login: it cannot tell, a warning"
    assert checks["opencode"]["status"] == "warn"
    assert checks["opencode"]["text"] == (
        "cannot tell whether it is logged in (opencode auth list: └  0 credentials)"
    )
    code, checks = doctor(project, tmp_path, "--coder", "opencode", ANTHROPIC_API_KEY="sk-ant")
    assert checks["opencode"]["status"] == "ok"  # opencode lists the key as an environment login


def test_aider_has_no_login_and_the_line_names_the_keys_it_reads(tmp_path):
    project = make_project(tmp_path)
    fake_cli.install(tmp_path / "bin", "aider", tmp_path / "aider-state")
    code, checks = doctor(project, tmp_path, "--coder", "aider")
    assert code == 0
    assert checks["aider"]["status"] == "warn"
    assert (
        "ANTHROPIC_API_KEY" in checks["aider"]["text"]
        and "none of them is set" in (checks["aider"]["text"])
    )
    code, checks = doctor(project, tmp_path, "--coder", "aider", OPENROUTER_API_KEY="sk-or")
    assert checks["aider"] == {
        "name": "aider",
        "status": "ok",
        "text": "OPENROUTER_API_KEY is set, which it reads as its API key",
        "fix": "",
    }
    assert fake_cli.probes(tmp_path / "aider-state") == [], "aider is never called"
