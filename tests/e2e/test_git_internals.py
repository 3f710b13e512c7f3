"""Git is not a door: a coder that plants a git hook or a config key that
runs a command (``core.fsmonitor``) gets it flagged, naming the key and its
value, and undone with a kept copy; stepkit's own git calls during the run
never run it.  Real CLI, real git project, a shell coder."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, PY, command_coder, flag_texts, make_project, sh


def shell_coder(project, body: str) -> str:
    good = project.state_dir / "good_calc.py"
    good.write_text(GOOD_MUL)
    script = project.state_dir / "coder.sh"
    script.write_text(
        f"set -e\ncat > /dev/null\ncp {shlex.quote(str(good))} calc.py\n{body}\necho CODER_COMPLETE\n"
    )
    return command_coder("sh", script)


def planted_script(project, name: str) -> str:
    """An executable script that records each time it runs in ``<name>.ran``."""
    script = project.state_dir / f"{name}.sh"
    script.write_text(
        f"#!/bin/sh\necho ran >> {shlex.quote(str(project.state_dir / (name + '.ran')))}\n"
    )
    script.chmod(0o755)
    return str(script)


def run_state(project, run_id: str) -> dict:
    import json

    return json.loads((store_dir(project.root) / "runs" / run_id / "state.json").read_text())[
        "state"
    ]


def test_a_planted_hook_and_fsmonitor_are_flagged_undone_and_never_run_by_stepkit(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    hook, monitor = planted_script(project, "hook"), planted_script(project, "fsmonitor")
    coder = shell_coder(
        project, f"cp {sh(hook)} .git/hooks/pre-commit\ngit config core.fsmonitor {sh(monitor)}\n"
    )
    result = project.run(coder=coder)
    assert not (project.state_dir / "fsmonitor.ran").exists(), (
        "stepkit's own git calls ran the planted fsmonitor"
    )
    assert not (project.state_dir / "hook.ran").exists()
    assert result.code == 5, result.stdout + result.stderr
    assert result.data["pending"]["node"] == "gate_user_review"

    flags = flag_texts(run_state(project, result.data["run_id"]))
    fsmonitor_flag = next(f for f in flags if "core.fsmonitor" in f)
    hook_flag = next(f for f in flags if ".git/hooks/pre-commit" in f)
    assert monitor in fsmonitor_flag and "undone" in fsmonitor_flag
    assert "added" in hook_flag and "undone" in hook_flag
    assert "Tamper flags" in result.data["pending"]["question"]
    assert "core.fsmonitor" in result.data["pending"]["question"]

    assert not (project.root / ".git" / "hooks" / "pre-commit").exists()
    config = subprocess.run(
        ["git", "config", "--get", "core.fsmonitor"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert config.stdout == ""
    kept = list((store_dir(project.root)).rglob("pre-commit")) + list(
        (store_dir(project.root)).rglob("config")
    )
    kept_texts = {path.name: path.read_text() for path in kept}
    assert "echo ran" in kept_texts["pre-commit"] and monitor in kept_texts["config"]


@pytest.mark.slow
def test_an_alias_and_a_filter_are_flagged_and_undone(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    smudge = planted_script(project, "smudge")
    coder = shell_coder(
        project,
        # the filter is a shell command: its path quoted in it, and that quoted again for sh
        f"git config filter.evil.clean {sh(sh(smudge))}\ngit config alias.st '!touch aliased'\n",
    )
    result = project.run(coder=coder)
    assert not (project.state_dir / "smudge.ran").exists()
    flags = flag_texts(run_state(project, result.data["run_id"]))
    assert any("filter.evil.clean" in f and smudge in f for f in flags), flags
    assert any("alias.st" in f for f in flags), flags
    listed = project.git("config", "--list", "--local")
    assert "filter.evil" not in listed and "alias.st" not in listed


@pytest.mark.slow
def test_an_honest_step_and_a_key_that_runs_nothing_have_no_git_flag(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    result = project.run(coder=shell_coder(project, "git config user.name coder\n"))
    assert result.code == 5
    assert not [f for f in flag_texts(run_state(project, result.data["run_id"])) if "git" in f]
    assert (
        project.git("config", "--get", "user.name") == "coder\n"
    )  # the step's business, left as it is


@pytest.mark.slow
def test_a_hook_a_gate_plants_is_flagged_as_the_gate_s_and_undone(tmp_path):
    from tests.support.e2e import PY

    project = make_project(tmp_path, reviewer=False)
    hook = planted_script(project, "hook")
    env = project.env(TEST_CMD=f"cp {sh(hook)} .git/hooks/post-commit && {sh(PY)} check.py")
    result = project.run(env=env)
    assert result.code == 5, result.stdout + result.stderr
    flags = flag_texts(run_state(project, result.data["run_id"]))
    assert any(
        f.startswith("the tests gate: git hook .git/hooks/post-commit added") for f in flags
    ), flags
    assert "post-commit" in result.data["pending"]["question"]
    assert not (project.root / ".git" / "hooks" / "post-commit").exists()


@pytest.mark.slow
def test_a_file_hidden_through_info_exclude_is_still_a_change_and_the_exclude_is_undone(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    exclude = project.root / ".git" / "info" / "exclude"
    original = exclude.read_text()
    coder = shell_coder(project, "echo 'x = 1' > hidden.py\necho hidden.py >> .git/info/exclude\n")
    result = project.run(coder=coder)
    state = run_state(project, result.data["run_id"])
    assert "hidden.py" in state["changed_files"]
    assert any(f.startswith("git info/exclude changed during the step") for f in flag_texts(state))
    assert exclude.read_text() == original


@pytest.mark.slow
def test_a_change_hidden_from_git_by_index_flags_is_still_a_change_and_the_flags_are_cleared(
    tmp_path,
):
    project = make_project(tmp_path, reviewer=False)
    coder = shell_coder(
        project,
        "echo '# changed' >> check.py\n"
        "git update-index --assume-unchanged check.py\n"
        "echo '# changed' >> lint.py\n"
        "git update-index --skip-worktree lint.py\n",
    )
    result = project.run(coder=coder)
    state = run_state(project, result.data["run_id"])
    assert {"check.py", "lint.py"} <= set(state["changed_files"]), state["changed_files"]
    assert any("assume-unchanged" in f and "check.py" in f for f in flag_texts(state)), flag_texts(
        state
    )
    assert any("skip-worktree" in f and "lint.py" in f for f in flag_texts(state)), flag_texts(
        state
    )
    tags = {line[2:]: line[0] for line in project.git("ls-files", "-v").splitlines()}
    assert tags["check.py"] == "H" and tags["lint.py"] == "H"


@pytest.mark.slow
def test_an_index_flag_a_gate_sets_is_flagged_and_cleared_from_the_listing_after_it(tmp_path):
    # the flags after a gate come from the tree listing taken after its command
    # (no listing of their own), even with the gate's edit to a file put back since
    project = make_project(tmp_path, reviewer=False)
    build = f"{PY} -m py_compile calc.py && echo '# x' >> lint.py && git update-index --assume-unchanged lint.py"
    result = project.run(coder=shell_coder(project, ""), env={"BUILD_CMD": build})
    flags = flag_texts(run_state(project, result.data["run_id"]))
    assert any(
        f.startswith("the build gate: git index flag assume-unchanged set on lint.py")
        for f in flags
    ), flags
    tags = {line[2:]: line[0] for line in project.git("ls-files", "-v").splitlines()}
    assert tags["lint.py"] == "H"
