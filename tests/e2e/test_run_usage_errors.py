"""Bad input is a usage error before anything runs: exit 2, one line on
stderr (no traceback), no run, the plan repo byte for byte as it was."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import PY


@pytest.fixture
def project(project):
    project.plan_bytes = plan_bytes(project)
    return project


def plan_bytes(project) -> dict[str, bytes]:
    return {
        str(p.relative_to(project.plans)): p.read_bytes()
        for p in sorted(project.plans.rglob("*"))
        if p.is_file()
    }


def assert_no_run(project, result, message):
    assert result.code == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    if isinstance(message, re.Pattern):
        assert len(lines) == 1 and message.fullmatch(lines[0].removeprefix("stepkit: error: ")), (
            lines
        )
    else:
        assert lines == [f"stepkit: error: {message}"]
    runs = store_dir(project.root) / "runs"
    assert not runs.is_dir() or not any(runs.iterdir())
    assert plan_bytes(project) == project.plan_bytes


def test_unknown_engine(project):
    result = project.stepkit(
        "run", "--project-dir", str(project.root), "--engine", "nope", json_out=False
    )
    assert_no_run(
        project,
        result,
        "unknown engine 'nope': use anthropic[:MODEL] or scripted:FILE or "
        "claude[:MODEL] or codex[:MODEL] or openai:MODEL",
    )


def test_missing_scripted_answers_file(project):
    result = project.stepkit(
        "run",
        "--project-dir",
        str(project.root),
        "--engine",
        "scripted:nowhere.yaml",
        json_out=False,
    )
    assert_no_run(
        project, result, "scripted engine: cannot read nowhere.yaml: No such file or directory"
    )


def test_preset_coder_that_is_not_installed(project):
    env = project.env(PATH="/nonexistent")
    result = project.run("--coder", "aider", env=env, json_out=False)
    assert_no_run(
        project,
        result,
        "--coder aider: the 'aider' CLI is not on PATH (install it: "
        "python -m pip install aider-chat; or use command:SHELL)",
    )


def test_empty_command_reviewer(project):
    result = project.run("--reviewer", "command:", json_out=False)
    assert_no_run(project, result, "--reviewer command:SHELL needs a command after 'command:'")


@pytest.mark.parametrize("role", ["coder", "reviewer"])
def test_a_coder_or_reviewer_no_plugin_can_own(project, role):
    result = project.run(f"--{role}", "mycoder", json_out=False)
    assert_no_run(
        project,
        result,
        f"--{role} mycoder: unknown {role} (use anthropic[:MODEL], command:SHELL or a "
        "preset: claude, codex, aider, opencode; a plugin may add others)",
    )


def test_a_coder_another_plugin_may_own_is_left_to_the_run_which_names_it(project):
    (project.root / "stepconf.py").write_text(
        "import stepkit\n\n@stepkit.hookimpl\ndef stepkit_implement(ctx):\n    return None\n"
    )
    result = project.run("--coder", "mycoder")
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "no plugin answered stepkit_implement for coder 'mycoder'" in result.output
    assert "Reason: unknown" not in result.output


CHECKED_CODER = """import stepkit

@stepkit.hookimpl
def stepkit_implement(ctx):
    return None

@stepkit.hookimpl
def stepkit_check_delegate(role, spec):
    if role != "coder":
        return None
    return "" if spec == "mycoder" else "mycoder"
"""


def test_a_plugin_that_checks_its_coder_spec_has_it_taken(project):
    """stepkit_check_delegate: the plugin claims its spec, so the run starts."""
    (project.root / "stepconf.py").write_text(CHECKED_CODER)
    result = project.run("--coder", "mycoder")
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "no plugin answered stepkit_implement for coder 'mycoder'" in result.output


def test_a_spec_no_checking_plugin_claims_is_refused_naming_every_plugins_specs(project):
    (project.root / "stepconf.py").write_text(CHECKED_CODER)
    project.stepkit(
        "trust", "--project-dir", str(project.root), json_out=False
    )  # no first-use note
    result = project.run("--coder", "yourcoder", json_out=False)
    assert_no_run(
        project,
        result,
        "--coder yourcoder: unknown coder (use anthropic[:MODEL], command:SHELL or a "
        "preset: claude, codex, aider, opencode; mycoder; a plugin may add others)",
    )


TUNABLES = (
    "max_fix_attempts, max_review_attempts, max_cost_usd, max_tokens, interactive, llm_max_retries, "
    "llm_max_retry_wait_s, llm_timeout_s, llm_max_output_tokens, llm_context_budget_tokens, coder_max_turns, "
    "coder_max_budget_usd, coder_fix_budget, model_<node>, effort_<node>"
)


@pytest.mark.parametrize(
    "setting, message",
    [
        (
            "max_fix_attempts=abc",
            "--set max_fix_attempts=abc: max_fix_attempts takes a whole number from 0 to 19",
        ),
        (
            "max_fix_attempts=1e9",
            "--set max_fix_attempts=1e9: max_fix_attempts takes a whole number from 0 to 19",
        ),
        (
            "max_fix_attempts=-1",
            "--set max_fix_attempts=-1: max_fix_attempts takes a whole number from 0 to 19",
        ),
        (
            "max_fix_attempts=1000000000",
            "--set max_fix_attempts=1000000000: max_fix_attempts takes a whole number from 0 to 19",
        ),
        (
            "max_review_attempts=1.5",
            "--set max_review_attempts=1.5: max_review_attempts takes a whole number from 0 to 19",
        ),
        ("max_cost_usd=0", "--set max_cost_usd=0: max_cost_usd takes a number above 0"),
        ("max_cost_usd=lots", "--set max_cost_usd=lots: max_cost_usd takes a number above 0"),
        ("max_tokens=true", "--set max_tokens=true: max_tokens takes a whole number of at least 1"),
        ("interactive=maybe", "--set interactive=maybe: interactive takes true or false"),
        ("model_orient=", "--set model_orient=: model_orient takes a model name"),
        (
            "effort_orient=huge",
            "--set effort_orient=huge: effort_orient takes one of low, medium, high, max",
        ),
        (
            "model_orinet=claude",
            (
                "--set model_orinet=…: graph step_runner has no node 'orinet' (nodes that ask a "
                "model: orient, implement, edge_case_sweep, independent_review, write_handoff)"
            ),
        ),
        (
            "max_fix_atempts=3",
            f"--set max_fix_atempts=…: unknown key 'max_fix_atempts' (tunables: {TUNABLES})",
        ),
        (
            "fix_attempts=3",
            (
                f"--set fix_attempts=…: fix_attempts is run state the graph keeps itself, not a "
                f"tunable (tunables: {TUNABLES})"
            ),
        ),
        (
            "gates=[]",
            f"--set gates=…: gates is run state the graph keeps itself, not a tunable (tunables: {TUNABLES})",
        ),
        (
            "usage={}",
            f"--set usage=…: usage is run state the graph keeps itself, not a tunable (tunables: {TUNABLES})",
        ),
    ],
)
def test_a_set_that_is_not_a_tunable_of_its_type(project, setting, message):
    assert_no_run(project, project.run("--set", setting, json_out=False), message)


@pytest.mark.parametrize("step", ["0", "-1", "abc", "1.5", ""])
def test_a_step_that_is_not_a_step_number(project, step):
    result = project.run(f"--step={step}", json_out=False)
    assert_no_run(project, result, f"--step {step}: expected a step number (1, 2, …) or 'next'")


@pytest.mark.slow
def test_the_default_engine_without_credentials(project, tmp_path):
    env = project.env(
        HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config")
    )  # no SDK profile either
    result = project.stepkit(
        "run",
        "--project-dir",
        str(project.root),
        "--coder",
        project.scripted_coder,
        env=env,
        json_out=False,
    )
    assert_no_run(
        project,
        result,
        "--engine anthropic: no credentials: set ANTHROPIC_API_KEY (or "
        "ANTHROPIC_AUTH_TOKEN), or choose another --engine",
    )
    verify = project.stepkit(
        "stage",
        "verify",
        "--step",
        "1",
        "--project-dir",
        str(project.root),
        env=env,
        json_out=False,
    )
    # no engine call in this stage, nothing to refuse: the gates ran (and the tests fail: mul is step 1's work)
    assert (verify.code, verify.stderr) == (1, "") and verify.stdout.startswith("stage verify:")


def test_a_stepkit_dir_that_is_a_file(project):
    store = store_dir(project.root)
    store.parent.mkdir(parents=True)
    store.write_text("not a directory\n")
    assert_no_run(
        project,
        project.run(json_out=False),
        f"{store} is not a directory (stepkit keeps its runs there); move it away",
    )


def test_a_runs_dir_that_is_a_file(project):
    store_dir(project.root).mkdir(parents=True)
    (store_dir(project.root) / "runs").write_text("not a directory\n")
    result = project.run(json_out=False)
    assert result.code == 2 and result.stderr == (
        f"stepkit: error: cannot create a run in {store_dir(project.root) / 'runs'}: it is not a directory\n"
    )
    assert plan_bytes(project) == project.plan_bytes


def read_only(project) -> list[str]:
    """A command prefix that runs stepkit with the project dir read-only: a
    plain chmod, or for root (whom modes do not stop) a read-only bind mount
    in a mount namespace of its own."""
    if os.geteuid() != 0:
        project.root.chmod(0o555)
        return []
    remount = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'
    prefix = ["unshare", "-m", "sh", "-c", remount, str(project.root)]
    if (
        not shutil.which("unshare")
        or subprocess.run([*prefix, "true"], check=False, capture_output=True).returncode != 0
    ):
        pytest.skip("root without mount namespaces: no way to make the project read-only")
    return prefix


def test_a_read_only_project_dir(project):
    prefix = read_only(project)
    try:
        proc = subprocess.run(
            [*prefix, PY, "-m", "stepkit", *project.run_args()],
            cwd=project.root,
            env=project.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        project.root.chmod(0o755)
    result = type(
        "Result", (), {"code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}
    )
    assert_no_run(
        project,
        result,
        re.compile(
            re.escape(f"cannot write {store_dir(project.root)}: ")
            + "(Read-only file system|Permission denied) "
            + re.escape("(stepkit keeps its runs there)")
        ),
    )


@pytest.mark.parametrize("run_id", ["..", "../x", "a/b", ".", "x" * 300])
def test_a_run_id_that_is_not_one(project, run_id):
    runs = store_dir(project.root) / "runs"
    message = (
        f"{run_id!r} is not a run id (a directory name under {runs}, e.g. 20261201-101500-ab12)"
    )
    assert_no_run(
        project,
        project.stepkit("resume", run_id, "--project-dir", str(project.root), json_out=False),
        message,
    )
    result = project.stepkit(
        "graph", "--run", run_id, "--project-dir", str(project.root), json_out=False
    )
    assert (result.code, result.stderr) == (2, f"stepkit: error: {message}\n")


# -- the step cannot be resolved: no run starts ---------------------------------


def test_no_plans_dir(project):
    result = project.run("--plans-dir", "nowhere", json_out=False)
    assert_no_run(
        project,
        result,
        re.compile(
            r"no plan repo at .*nowhere \(expected .*nowhere/steps/\): stepkit init writes one, --plans-dir names another; "
            r"no run was started"
        ),
    )


def test_a_step_that_does_not_exist(project):
    result = project.run("--step", "9", json_out=False)
    assert_no_run(
        project,
        result,
        re.compile(
            r"step 9 not found in .*steps \(stepkit status lists the steps\); no run was started"
        ),
    )


@pytest.mark.parametrize("prompt", ["execute step 9", "step 9 please", "let's do step 9"])
def test_a_prompt_that_names_a_step_that_does_not_exist(project, prompt):
    result = project.run(prompt, json_out=False)
    assert_no_run(
        project,
        result,
        re.compile(
            r"step 9 not found in .*steps \(stepkit status lists the steps\); no run was started"
        ),
    )


def test_a_malformed_step_file_is_named_with_its_problem(project):
    bad = project.plans / "steps" / "01-mul.md"
    bad.write_text("---\ntitle: [unclosed\n---\nbody\n")
    project.plan_bytes = plan_bytes(project)
    for args in (("--step", "1"), ()):  # asked for, or the next step could be it
        result = project.run(*args, json_out=False)
        assert_no_run(
            project,
            result,
            # the line stepkit status lists it with (one validation for every command)
            re.compile(r".*01-mul\.md: malformed frontmatter: .+; nothing was started"),
        )


def test_no_step_left_to_run(project):
    for plan in (project.plans / "steps").glob("*.md"):
        plan.write_text(plan.read_text().replace("status: pending", "status: complete"))
    project.plan_bytes = plan_bytes(project)
    result = project.run(json_out=False)
    assert_no_run(
        project, result, re.compile(r"no in-progress or pending step in .*; no run was started")
    )


@pytest.mark.parametrize("args", [("run", "--bogus"), ("--bogus",), ("status", "--nope")])
def test_an_unknown_option_names_stepkit_once(project, args):
    result = project.stepkit(*args, json_out=False)
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [
        f"stepkit: error: unrecognized arguments: {args[-1]} (stepkit --help shows the usage)"
    ]
