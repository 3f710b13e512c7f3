"""Each preset driven through the real CLI: ``stepkit stage implement``,
``stepkit stage review`` and a full ``stepkit run`` (scripted engine for the
LLM nodes, the real CLI as coder and reviewer) against the loopback API the
CLI speaks.  Opt-in (see conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from stepkit.plugins.agent_clis import state_paths
from stepkit.workspace import process, sandbox
from stepkit.workspace.store import store_dir, store_root
from tests.realcli.harness import Model, version
from tests.support.e2e import CALC, GOOD_MUL, PY, SWEEP

pytestmark = [pytest.mark.realcli, pytest.mark.project(reviewer=False)]

CLIS = ["claude", "codex", "aider", "opencode"]


def stepkit(project, env, *args):
    proc = subprocess.run(
        [PY, "-m", "stepkit", *args, "--project-dir", str(project.root), "--json"],
        cwd=project.root,
        env=project.env(**env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    data = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    return proc, data


def changes(project) -> str:
    """The project's git status (the run store left out)."""
    return project.git("status", "--porcelain", "--untracked-files=all", "--", ".", ":!.stepkit")


def implement_turns(model: Model, project) -> None:
    model.write(project.root / "calc.py", GOOD_MUL, old=CALC)
    model.say("Added calc.mul.\n\nCODER_COMPLETE")


@pytest.mark.parametrize("cli", CLIS)
def test_stage_implement(cli, project, cli_bin, tmp_path):
    with Model(cli, tmp_path) as model:
        implement_turns(model, project)
        proc, data = stepkit(
            project,
            model.env(cli_bin(cli)),
            "stage",
            "implement",
            "--step",
            "1",
            "--coder",
            cli,
            "--engine",
            f"scripted:{project.script()}",
        )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    coder = data["coder_result"]
    assert coder["sentinel"] == "CODER_COMPLETE", coder["text"]
    assert (project.root / "calc.py").read_text() == GOOD_MUL, coder["text"]
    assert changes(project) == " M calc.py\n", f"{cli} {version(cli)} left more than its edit"
    assert coder["usage"]["output_tokens"] > 0


@pytest.mark.parametrize("cli", CLIS)
def test_stage_review_is_read_only_and_reports_the_answer(cli, project, cli_bin, tmp_path):
    (project.root / "calc.py").write_text(GOOD_MUL)
    with Model(cli, tmp_path) as model:
        report = model.review("calc.py", "mul is fine.")
        proc, data = stepkit(
            project,
            model.env(cli_bin(cli)),
            "stage",
            "review",
            "--step",
            "1",
            "--reviewer",
            cli,
            "--engine",
            f"scripted:{project.script()}",
        )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert data["review_report"] == report
    assert changes(project) == " M calc.py\n"


@pytest.mark.parametrize("cli", CLIS)
def test_a_full_run_with_the_cli_as_coder_and_reviewer(cli, project, cli_bin, tmp_path):
    engine = project.script(edge_case_sweep={**SWEEP, "needs_independent_review": True})
    with Model(cli, tmp_path) as model:
        implement_turns(model, project)
        report = model.review("calc.py", "mul is fine.")
        env = model.env(cli_bin(cli))
        proc, data = stepkit(
            project,
            env,
            "run",
            "--step",
            "1",
            "--coder",
            cli,
            "--reviewer",
            cli,
            "--engine",
            f"scripted:{engine}",
        )
        assert proc.returncode == 5, proc.stderr + proc.stdout
        assert data["pending"]["node"] == "gate_user_review"
        done, final = stepkit(project, env, "resume", "--answer", "approve")
    assert done.returncode == 0 and final["outcome"] == "STEP_COMPLETE", done.stderr + done.stdout
    assert (project.root / "calc.py").read_text() == GOOD_MUL
    run_dir = store_dir(project.root) / "runs" / final["run_id"]
    state = json.loads((run_dir / "state.json").read_text())
    assert report in json.dumps(state, ensure_ascii=False)  # the review ran and was recorded
    usage = final["usage"]
    assert usage["output_tokens"] > 0
    assert usage["cost_usd"] > 0 or cli == "codex"  # codex reports tokens, not cost
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    who = {e.get("who") for e in events if e["event"] == "delegate_usage"}
    assert who == {f"coder-{cli}", f"reviewer-{cli}"}


@pytest.mark.parametrize("mode", ["workspace-write", "danger-full-access"])
def test_codex_runs_commands_in_stepkits_sandbox_only_without_its_own(
    mode, project, cli_bin, tmp_path, monkeypatch
):
    """Nested sandboxes: codex's own bubblewrap cannot start inside stepkit's
    (it fails making its mount points in the read-only filesystem), so each
    command of ``--sandbox workspace-write`` fails and the model is told so;
    ``danger-full-access``, which the preset passes when confined, runs them."""
    with Model("codex", tmp_path) as model:
        model.shell("touch made-by-codex.txt")
        model.say("Done.\n\nCODER_COMPLETE")
        for name, value in model.env(cli_bin("codex")).items():
            monkeypatch.setenv(name, value)
        policy = sandbox.policy_for(project.root, store_root(project.root))
        assert policy is not None, sandbox.unavailable()
        with sandbox.confined(policy), sandbox.widened(state_paths("codex")):
            run = process.run(
                f"codex exec --sandbox {mode} --json --skip-git-repo-check -",
                cwd=project.root,
                stdin_text="Touch the file.",
                timeout=300,
            )
        outputs = [
            str(item.get("output"))
            for request in model.api.requests
            for item in request.body.get("input", [])
            if item.get("type") == "function_call_output"
        ]
    assert run.exit_code == 0, run.output
    made = (project.root / "made-by-codex.txt").exists()
    if mode == "danger-full-access":
        assert made, outputs
    else:
        assert not made and any("bwrap:" in text for text in outputs), outputs


def test_claudes_own_sandbox_runs_its_commands_inside_stepkits(project, cli_bin, tmp_path):
    """Nested sandboxes: Claude Code's sandbox turned on in its settings
    (and told to refuse rather than run a command unsandboxed) starts its
    bubblewrap and its network proxy inside stepkit's.  Its Bash command
    writes the project; a write to the home directory fails (both
    sandboxes refuse it), and so does a connection to the model's loopback
    API, which stepkit's sandbox keeps and only Claude Code's own cuts off.
    Needs socat.  As root, bubblewrap covers ``/proc/irq`` and ``/proc/bus``
    in stepkit's sandbox, so a nested one cannot mount a fresh /proc
    ("Can't mount proc on /newroot/proc: Operation not permitted") and
    Claude Code needs ``enableWeakerNestedSandbox`` (docs/agents.md)."""
    assert shutil.which("socat"), "Claude Code's sandbox needs socat: apt-get install socat"
    home = tmp_path / "home"
    outside, settings_file = home / "outside.txt", home / ".claude" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}
    if os.geteuid() == 0:
        settings["enableWeakerNestedSandbox"] = True
    settings_file.write_text(json.dumps({"sandbox": settings}))
    with Model("claude", tmp_path) as model:
        port = model.api.base_url.rsplit(":", 1)[1].strip("/")
        model.shell(
            f"touch made-by-claude.txt; echo no > {outside}; "
            f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo API-REACHED || echo API-CUT-OFF"
        )
        model.say("Done.\n\nCODER_COMPLETE")
        proc, data = stepkit(
            project,
            model.env(cli_bin("claude")),
            "stage",
            "implement",
            "--step",
            "1",
            "--coder",
            "claude",
            "--engine",
            f"scripted:{project.script()}",
        )
        results = [
            json.dumps(block.get("content"))
            for request in model.api.requests
            for message in request.body.get("messages", [])
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert data["coder_result"]["sentinel"] == "CODER_COMPLETE", results
    assert (project.root / "made-by-claude.txt").exists(), results
    assert not outside.exists(), results
    assert any("Read-only file system" in text for text in results), results
    assert any("API-CUT-OFF" in text for text in results), results
