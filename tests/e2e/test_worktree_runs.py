"""``stepkit run --worktree [--merge]`` end to end: real git repositories in
tmp dirs, real ``git worktree``, the real CLI, command coders.

The user's tree (with an uncommitted edit and an untracked file) must stay
byte for byte as it was; the step must become one commit on its branch; a
failed step's work tree must be kept with everything in it and be listed by
``stepkit status``; a paused run must be resumable from the user's tree.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit.workspace.files import state_home
from tests.support.e2e import (
    CALC,
    GOOD_MUL,
    HANDOFF,
    PY,
    WRONG_MUL,
    command_coder,
    sandbox_table,
    sh,
)
from tests.support.gitrepo import commit_all, init_repo
from tests.support.waiting import SAFETY_S, wait_until

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
#: the project of these runs: bytecode ignored, and a readme
PROJECT = pytest.mark.project(files={".gitignore": "__pycache__/\n", "README.md": "# calc\n"})
pytestmark = [pytest.mark.slow, PROJECT]

BRANCH = "stepkit/01-mul"


def git(root: Path, *args: str) -> str:
    """git in ``root`` without refreshing the index (so looking never changes its bytes)."""
    return subprocess.run(
        ["git", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
    ).stdout


def tree_state(root: Path) -> dict[str, object]:
    """Every file's bytes outside .git, the index's bytes, HEAD, the branch and git status."""
    files = {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }
    return {
        "files": files,
        "index": (root / ".git" / "index").read_bytes(),
        "head": git(root, "rev-parse", "HEAD"),
        "branch": git(root, "symbolic-ref", "HEAD"),
        "status": git(root, "status", "--porcelain"),
    }


def local_edits(project) -> None:
    """An uncommitted edit of a tracked file and an untracked file in the user's tree."""
    (project.root / "calc.py").write_text(CALC + "# my own edit, not committed\n")
    (project.root / "scratch.txt").write_text("mine\n")


def branches(root: Path) -> list[str]:
    return git(root, "branch", "--list", "stepkit/*", "--format=%(refname:short)").split()


def show(root: Path, spec: str) -> str:
    return git(root, "show", spec)


# -- the user's tree is never touched; the step is one commit --------------------------------------


def test_the_users_tree_stays_byte_for_byte_and_the_step_is_one_commit(project):
    local_edits(project)
    before = tree_state(project.root)
    base = before["head"].strip()

    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr + paused.stdout
    worktree = Path(paused.data["worktree"])
    assert paused.data["branch"] == BRANCH
    assert worktree.is_dir() and worktree.is_relative_to(state_home() / "worktrees")
    assert not worktree.is_relative_to(project.root)
    assert (worktree / "calc.py").read_text() == GOOD_MUL  # the coder ran in the work tree
    assert tree_state(project.root) == before

    done = project.resume("approve")  # from the user's tree, no run id: the worktree's run is found
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
    assert tree_state(project.root) == before
    assert done.data["branch"] == BRANCH and done.data["worktree"] == str(worktree)
    assert "Merge it with: git merge stepkit/01-mul" in done.output
    assert "stepkit never commits" not in done.output

    # one commit on the branch, holding everything
    assert git(project.root, "rev-list", "--count", f"{base}..{BRANCH}").strip() == "1"
    assert git(project.root, "rev-parse", f"{BRANCH}^").strip() == base
    message = git(project.root, "log", "-1", "--format=%B", BRANCH)
    assert message.splitlines()[0] == HANDOFF["step_summary"]
    assert "Add mul" in message
    assert done.data["commit"] == git(project.root, "rev-parse", BRANCH).strip()
    changed = set(git(project.root, "diff", "--name-only", base, BRANCH).split())
    assert changed == {
        "calc.py",
        "plans/steps/01-mul.md",
        "plans/handoffs/01-mul.md",
        "plans/NOTES.md",
        "plans/steps/03-pow.md",
    }
    assert show(project.root, f"{BRANCH}:calc.py") == GOOD_MUL
    assert "status: complete" in show(project.root, f"{BRANCH}:plans/steps/01-mul.md")
    assert "calc functions take two numbers" in show(project.root, f"{BRANCH}:plans/NOTES.md")
    later = show(project.root, f"{BRANCH}:plans/steps/03-pow.md").split("## Edge cases", 1)[1]
    assert "Division by zero must raise ValueError." in later
    assert "result: complete" in show(project.root, f"{BRANCH}:plans/handoffs/01-mul.md")

    # the branch holds everything, so the work tree is gone; status lists the unmerged step
    assert done.data["worktree_removed"] is True and not worktree.exists()
    status = project.stepkit("status", "--project-dir", str(project.root))
    assert status.data["worktree_runs"] == []
    assert [(b["branch"], b["step"], b["status"]) for b in status.data["unmerged_branches"]] == [
        (BRANCH, 1, "complete")
    ]
    table = project.stepkit("status", "--project-dir", str(project.root), json_out=False).stdout
    assert "stepkit/01-mul  step 1  Add mul  (git merge stepkit/01-mul)" in table


def test_the_worktree_setting_runs_the_step_in_a_worktree(project):
    (project.root / "stepkit.toml").write_text(
        "worktree = true\n" + (project.root / "stepkit.toml").read_text()
    )
    commit_all(project.root, "run steps in work trees")
    paused = project.run()
    assert paused.code == 5, paused.stderr
    assert (
        paused.data["branch"] == BRANCH
        and (Path(paused.data["worktree"]) / "calc.py").read_text() == GOOD_MUL
    )
    assert (project.root / "calc.py").read_text() == CALC


def test_without_a_git_identity_the_step_is_committed_as_stepkit(project, tmp_path):
    no_identity = project.env(
        HOME=str(tmp_path), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1"
    )
    assert project.run("--worktree", env=no_identity).code == 5
    done = project.resume("approve", env=no_identity)
    assert done.code == 0 and done.data["commit"], done.stdout + done.stderr
    assert (
        git(project.root, "log", "-1", "--format=%an <%ae>", BRANCH).strip()
        == "stepkit <stepkit@localhost>"
    )


# -- --merge ---------------------------------------------------------------------------------------


def test_merge_merges_a_clean_branch_and_keeps_unrelated_local_edits(project):
    (project.root / "README.md").write_text("# calc\n\nmy notes, not committed\n")
    (project.root / "scratch.txt").write_text("mine\n")
    paused = project.run("--worktree", "--merge")
    assert paused.code == 5, paused.stderr
    done = project.resume("approve")  # --merge was remembered in the run's checkpoint
    assert done.code == 0 and done.data["merged"] is True, done.stdout + done.stderr
    assert "Merged stepkit/01-mul into" in done.output
    assert (project.root / "calc.py").read_text() == GOOD_MUL
    assert (project.root / "README.md").read_text() == "# calc\n\nmy notes, not committed\n"
    assert (project.root / "scratch.txt").read_text() == "mine\n"
    assert git(project.root, "log", "-1", "--format=%s").strip() == HANDOFF["step_summary"]
    assert git(project.root, "status", "--porcelain").splitlines() == [
        " M README.md",
        "?? scratch.txt",
    ]
    assert project.plan_status(1) == "complete"


def test_resume_merge_merges_a_run_started_without_it(project):
    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr
    done = project.stepkit(
        "resume", "--project-dir", str(project.root), "--answer", "approve", "--merge"
    )
    assert done.code == 0 and done.data["merged"] is True, done.stdout + done.stderr
    assert (project.root / "calc.py").read_text() == GOOD_MUL
    assert git(project.root, "log", "-1", "--format=%s").strip() == HANDOFF["step_summary"]


def test_merge_leaves_the_branch_when_a_local_edit_touches_a_file_the_merge_changes(project):
    local_edits(project)  # calc.py edited, not committed: the merge changes calc.py
    before = tree_state(project.root)
    paused = project.run("--worktree", "--merge")
    done = project.resume("approve")
    assert paused.code == 5 and done.code == 0, done.stderr
    assert done.data["merged"] is False
    assert "not merged: your uncommitted changes touch calc.py" in done.data["merge_note"]
    assert "Merge it with: git merge stepkit/01-mul" in done.output
    assert tree_state(project.root) == before
    assert branches(project.root) == [BRANCH]


def test_merge_leaves_the_branch_when_the_merge_conflicts(project):
    paused = project.run("--worktree", "--merge")
    assert paused.code == 5, paused.stderr
    # meanwhile the user commits their own mul
    (project.root / "calc.py").write_text(WRONG_MUL)
    commit_all(project.root, "my own mul")
    head = git(project.root, "rev-parse", "HEAD")
    done = project.resume("approve")
    assert done.code == 0 and done.data["merged"] is False, done.stderr
    assert "conflicts in calc.py" in done.data["merge_note"]
    assert git(project.root, "rev-parse", "HEAD") == head
    assert git(project.root, "status", "--porcelain") == ""


# -- what is kept ----------------------------------------------------------------------------------


def test_a_failed_steps_worktree_is_kept_with_everything_and_listed_by_status(project):
    project.coder_actions(
        {
            "write": {"calc.py": WRONG_MUL, "wip.txt": "half done\n"},
            "say": "gave up",
            "sentinel": "CODER_FAILED",
            "exit": 1,
        }
    )
    failed = project.run("--worktree")
    assert failed.code == 1 and failed.outcome == "STEP_FAILED", failed.stderr
    worktree = Path(failed.data["worktree"])
    assert failed.data["worktree_removed"] is False and failed.data["commit"] is None
    assert (worktree / "calc.py").read_text() == WRONG_MUL
    assert (worktree / "wip.txt").read_text() == "half done\n"
    assert f"The work tree is kept with everything in it: {worktree}" in failed.output
    assert branches(project.root) == [BRANCH]
    assert git(project.root, "rev-parse", BRANCH) == git(
        project.root, "rev-parse", "HEAD"
    )  # nothing committed

    status = project.stepkit("status", "--project-dir", str(project.root))
    [entry] = status.data["worktree_runs"]
    assert (entry["branch"], entry["worktree"], entry["step"], entry["run_id"], entry["state"]) == (
        BRANCH,
        str(worktree),
        1,
        failed.data["run_id"],
        "step_failed",
    )
    assert status.data["unmerged_branches"] == []  # not complete there
    table = project.stepkit("status", "--project-dir", str(project.root), json_out=False).stdout
    assert f"stepkit/01-mul  step 1  run {failed.data['run_id']}  step_failed" in table
    drop = next(line for line in table.splitlines() if "to start the step over" in line)
    assert drop.endswith(
        f"git worktree remove --force {shlex.quote(str(worktree))} && git branch -D stepkit/01-mul"
    )

    again = project.run("--worktree")  # its branch is there: a usage error, nothing started
    assert again.code == 2 and "branch stepkit/01-mul already exists" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert (worktree / "wip.txt").read_text() == "half done\n"

    command = drop.split("drop what it holds: ", 1)[1]
    subprocess.run(command, shell=True, cwd=project.root, check=True, capture_output=True)
    assert project.run("--worktree").outcome == "STEP_FAILED"  # started over: it ran again


def test_a_paused_run_is_resumed_by_its_id_from_the_users_tree_and_listed_meanwhile(project):
    paused = project.run("--worktree")
    assert paused.code == 5
    status = project.stepkit("status", "--project-dir", str(project.root))
    [entry] = status.data["worktree_runs"]
    assert (entry["run_id"], entry["state"], entry["node"]) == (
        paused.data["run_id"],
        "paused",
        "gate_user_review",
    )
    assert entry["age"] is not None
    done = project.stepkit(
        "resume", paused.data["run_id"], "--answer", "approve", "--project-dir", str(project.root)
    )
    assert done.code == 0 and done.data["commit"], done.stderr
    assert show(project.root, f"{BRANCH}:calc.py") == GOOD_MUL


def test_resume_without_a_run_id_names_paused_runs_of_different_steps_in_tree_and_worktree(project):
    in_worktree = project.run("--worktree")  # step 1, paused at the final gate
    in_tree = project.run(
        "--step", "2"
    )  # step 2 in the user's tree: its dependency is unmet, it asks
    assert in_worktree.code == 5 and in_tree.code == 5, in_tree.stderr
    refused = project.resume("approve")
    one_line_error(
        refused,
        "runs of different steps are paused",
        in_worktree.data["run_id"],
        in_tree.data["run_id"],
    )


# -- locks -----------------------------------------------------------------------------------------

HOLDING_CODER = r"""
import os, pathlib, sys
state = pathlib.Path(os.environ["E2E_STATE_DIR"])
sys.stdin.read()
(pathlib.Path(os.environ["STEPKIT_PROJECT_DIR"]) / "partial.txt").write_text("begun\n")
(state / "holding").write_text("1")
with open(state / "release") as pipe:  # blocks until the test opens the pipe for writing
    pipe.read()
(pathlib.Path(os.environ["STEPKIT_PROJECT_DIR"]) / "calc.py").write_text(open(state / "good_mul").read())
print("CODER_COMPLETE")
"""


def test_a_worktree_run_and_a_run_in_the_users_tree_hold_different_locks(project):
    (project.state_dir / "holding_coder.py").write_text(HOLDING_CODER)
    (project.state_dir / "good_mul").write_text(GOOD_MUL)
    os.mkfifo(project.state_dir / "release")
    holding = subprocess.Popen(
        [
            PY,
            "-m",
            "stepkit",
            *project.run_args(coder=command_coder(PY, project.state_dir / "holding_coder.py")),
            "--json",
        ],
        cwd=project.root,
        env=project.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(
            lambda: (project.state_dir / "holding").exists(),
            "the user's-tree run in its coder",
            holding,
        )
        beside = project.run("--worktree")  # its own work tree, its own lock: it proceeds
        assert beside.code == 5, beside.stderr
        second = project.run()  # a second run in the user's tree is still refused
        assert second.code == 2 and "is live in this project" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1
    finally:
        with open(project.state_dir / "release", "w") as pipe:
            pipe.write("go")
        _, err = holding.communicate(timeout=SAFETY_S)
    assert holding.returncode == 5, err


def test_an_interrupted_worktree_run_keeps_its_worktree_and_status_says_so(project):
    (project.state_dir / "holding_coder.py").write_text(HOLDING_CODER)
    os.mkfifo(project.state_dir / "release")
    running = subprocess.Popen(
        [
            PY,
            "-m",
            "stepkit",
            *project.run_args(
                "--worktree", coder=command_coder(PY, project.state_dir / "holding_coder.py")
            ),
            "--json",
        ],
        cwd=project.root,
        env=project.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until(
        lambda: (project.state_dir / "holding").exists(), "the worktree run in its coder", running
    )
    status = project.stepkit("status", "--project-dir", str(project.root))
    [entry] = status.data["worktree_runs"]
    assert entry["state"] == "running"
    running.terminate()
    _, err = running.communicate(timeout=SAFETY_S)
    assert running.returncode == 143, err
    worktree = Path(entry["worktree"])
    assert (worktree / "partial.txt").read_text() == "begun\n"
    [entry] = project.stepkit("status", "--project-dir", str(project.root)).data["worktree_runs"]
    assert entry["state"] == "interrupted" and entry["branch"] == BRANCH
    assert not (project.root / "partial.txt").exists()


# -- bad input -------------------------------------------------------------------------------------


def one_line_error(result, *words: str) -> None:
    assert result.code == 2, result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stepkit: error:"), result.stderr
    for word in words:
        assert word in lines[0]


def test_bad_inputs_exit_2_with_one_line_and_leave_nothing(project, tmp_path):
    one_line_error(project.run("--merge"), "--merge works only with --worktree")
    one_line_error(project.run("--worktree", "--step", "9"), "9")
    # refused after the work tree was made, before any run: it is removed again with its branch
    one_line_error(project.run("--worktree", "--set", "no_such_knob=1"), "no_such_knob")
    assert branches(project.root) == []
    assert git(project.root, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (state_home() / "worktrees").exists() or not any(
        (state_home() / "worktrees").rglob("01-*")
    )

    git(project.root, "branch", BRANCH)
    one_line_error(
        project.run("--worktree"), "branch stepkit/01-mul already exists", "git branch -D"
    )
    git(project.root, "branch", "-D", BRANCH)

    outside = tmp_path / "loose"
    (outside / "plans" / "steps").mkdir(parents=True)
    (outside / "plans" / "steps" / "01-a.md").write_text("---\ntitle: A\n---\n")
    result = project.stepkit(
        "run",
        "--worktree",
        "--project-dir",
        str(outside),
        "--engine",
        f"scripted:{project.script()}",
        "--coder",
        project.scripted_coder,
    )
    one_line_error(result, "needs a git repository")

    untracked = tmp_path / "untracked"
    untracked.mkdir()
    (untracked / "README.md").write_text("x\n")
    init_repo(untracked)
    (untracked / "plans" / "steps").mkdir(parents=True)
    (untracked / "plans" / "steps" / "01-a.md").write_text("---\ntitle: A\n---\n")
    result = project.stepkit(
        "run",
        "--worktree",
        "--project-dir",
        str(untracked),
        "--engine",
        f"scripted:{project.script()}",
        "--coder",
        project.scripted_coder,
    )
    one_line_error(result, "plan repo plans is not tracked at HEAD")
    assert branches(untracked) == []


# -- tools from the user's tree ---------------------------------------------------------------------

SRC_CHECK = """import sys
import calc

print("prefix=" + sys.prefix)
print("calc=" + calc.__file__)
print("1 passed in 0.01s" if hasattr(calc, "mul") else "1 failed in 0.01s")  # a runner's summary
sys.exit(0 if hasattr(calc, "mul") else 1)
"""


def test_gates_borrow_the_users_venv_but_import_the_worktrees_source(project):
    """A src layout whose virtualenv (untracked, so not in the work tree)
    has the user's tree installed editable: the gates find its python, and
    still import the work tree's src/calc.py, which the step changed."""
    root = project.root
    (root / "calc.py").rename(root / "src_calc.py")
    (root / "src").mkdir()
    (root / "src_calc.py").rename(root / "src" / "calc.py")
    (root / "check.py").write_text(SRC_CHECK)
    (root / "stepkit.toml").write_text(
        sandbox_table(project.state_dir)
        + '[commands]\nformat = ""\nlint = ""\nbuild = ""\ntest = "python check.py"\n'
    )
    (root / ".gitignore").write_text("__pycache__/\n.venv/\n")
    commit_all(root, "src layout")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    [site] = (root / ".venv" / "lib").glob("python*/site-packages")
    (site / "_calc_editable.pth").write_text(f"{root / 'src'}\n")  # what an editable install leaves
    project.coder_actions({"write": {"src/calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"})

    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr + paused.output
    worktree = Path(paused.data["worktree"])
    [tests] = [g for g in paused.data["gates"] if g["name"] == "tests"]
    assert tests["status"] == "pass", tests["evidence"]
    printed = Path(tests["log"]).read_text()  # the evidence keeps the runner's summary only
    assert f"prefix={root / '.venv'}" in printed
    assert f"calc={worktree / 'src' / 'calc.py'}" in printed
    assert (root / "src" / "calc.py").read_text() == CALC


def test_the_api_checks_a_worktree_runs_local_plugins_against_the_users_trust(project, monkeypatch):
    """A fresh work tree is no project seen for the first time: a committed
    change to stepconf.py the user never trusted is refused, not trusted on
    first use there."""
    from stepkit.api import run_step
    from stepkit.errors import PluginError

    (project.root / "stepconf.py").write_text(
        '"""The project\'s own plugin (it adds nothing)."""\n'
    )
    commit_all(project.root, "a local plugin")
    assert project.stepkit("trust", "--project-dir", str(project.root), json_out=False).code == 0
    (project.root / "stepconf.py").write_text('"""Changed, and never trusted."""\n')
    commit_all(project.root, "the plugin changed")
    monkeypatch.setenv("E2E_STATE_DIR", str(project.state_dir))
    options = {
        "project_dir": project.root,
        "engine": f"scripted:{project.script()}",
        "coder": project.scripted_coder,
        "worktree": True,
    }
    with pytest.raises(PluginError, match="stepconf.py changed since it was trusted"):
        run_step(**options)
    assert branches(project.root) == []
    assert project.stepkit("trust", "--project-dir", str(project.root), json_out=False).code == 0
    result = run_step(**options)
    assert result.outcome == "PAUSED" and result.to_json()["branch"] == BRANCH, result.output


def test_runs_from_a_linked_work_tree_of_the_user_reach_the_gate_and_merge_into_its_branch(
    project, tmp_path
):
    """The user works in a linked work tree of their own: its run store lies
    outside it (in the common git dir), which a run's snapshot must not
    trip over, and a --worktree run merges into that tree's branch."""
    linked = tmp_path / "linked"
    git(project.root, "worktree", "add", "-q", "-b", "feature", str(linked))
    plain = project.stepkit(
        "run",
        "--project-dir",
        str(linked),
        "--engine",
        f"scripted:{project.script()}",
        "--coder",
        project.scripted_coder,
        "--step",
        "1",
    )
    assert plain.code == 5 and plain.data["pending"]["node"] == "gate_user_review", (
        plain.stderr + plain.output
    )
    assert (linked / "calc.py").read_text() == GOOD_MUL
    git(linked, "checkout", "-q", "--", ".")  # what the plain run did is set aside
    git(linked, "clean", "-qfd")

    paused = project.stepkit(
        "run",
        "--project-dir",
        str(linked),
        "--engine",
        f"scripted:{project.script()}",
        "--coder",
        project.scripted_coder,
        "--step",
        "1",
        "--worktree",
        "--merge",
    )
    assert paused.code == 5, paused.stderr
    done = project.stepkit(
        "resume", paused.data["run_id"], "--answer", "approve", "--project-dir", str(linked)
    )
    assert done.code == 0 and done.data["merged"] is True, done.stdout + done.stderr
    assert "Merged stepkit/01-mul into feature." in done.output
    assert (linked / "calc.py").read_text() == GOOD_MUL
    assert git(project.root, "rev-parse", "HEAD") != git(project.root, "rev-parse", "feature")
    assert (project.root / "calc.py").read_text() == CALC


def test_a_coders_edit_to_the_plan_repo_is_undone_in_a_worktree_run_too(project):
    """The copy a restore keeps goes to the run's directory, which lies
    outside a linked work tree (in the common git dir)."""
    original = (project.plans / "steps" / "02-div.md").read_bytes()
    project.coder_actions(
        {
            "write": {"calc.py": GOOD_MUL, "plans/steps/02-div.md": "rewritten"},
            "sentinel": "CODER_COMPLETE",
        }
    )
    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr
    worktree = Path(paused.data["worktree"])
    assert (worktree / "plans" / "steps" / "02-div.md").read_bytes() == original
    kept = list(Path(paused.data["run_dir"]).rglob("02-div.md"))
    assert kept and kept[0].read_text() == "rewritten"


def test_what_a_gate_rewrote_is_put_back_in_a_worktree_run_with_the_copy_in_its_run_dir(project):
    rewrite = project.state_dir / "rewrite.py"
    rewrite.write_text(
        'import pathlib\nfor name in ("check.py", "lint.py"):\n'
        '    path = pathlib.Path(name)\n    path.write_text(path.read_text() + "\\n\\n")\n'
    )
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(
            f'test = "{PY} check.py"', f'test = "{sh(PY, rewrite)} && {PY} check.py"'
        )
    )
    commit_all(project.root, "tests that rewrite the tree")
    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr
    worktree = Path(paused.data["worktree"])
    assert git(worktree, "status", "--porcelain", "--", "check.py", "lint.py") == ""
    kept = sorted(Path(paused.data["run_dir"]).glob("displaced/tests-*/*.py"))
    assert {p.name for p in kept} == {"check.py", "lint.py"}
    assert all(p.read_text().endswith("\n\n\n") for p in kept)


def test_a_step_starts_from_another_steps_branch_with_worktree_base(project, monkeypatch):
    """The internal ``worktree_base`` (for a step stacked on a step not
    merged yet): the plan repo read is the base's, where step 1 is complete,
    so step 2's dependency holds and its branch starts at step 1's commit."""
    from stepkit.api import resume_run, run_step

    assert project.run("--worktree").code == 5
    assert project.resume("approve").code == 0
    monkeypatch.setenv("E2E_STATE_DIR", str(project.state_dir))
    paused = run_step(
        project_dir=project.root,
        engine=f"scripted:{project.script()}",
        coder=project.scripted_coder,
        worktree=True,
        worktree_base=BRANCH,
    )
    assert paused.outcome == "PAUSED" and paused.to_json()["branch"] == "stepkit/02-div", (
        paused.output
    )
    assert paused.state["step"] == 2 and not paused.state.get("unsatisfied")
    done = resume_run(paused.run_id, answer="approve", project_dir=project.root)
    assert done.outcome == "STEP_COMPLETE", done.output
    assert git(project.root, "rev-parse", "stepkit/02-div^") == git(
        project.root, "rev-parse", BRANCH
    )
    assert project.plan_status(1) == "pending"  # the user's tree is as it was


def test_loading_the_users_local_plugin_writes_no_bytecode_into_their_tree(project):
    (project.root / "stepconf.py").write_text(
        '"""The project\'s own plugin (it adds nothing)."""\n'
    )
    (project.root / ".gitignore").write_text("")  # nothing hides a __pycache__ here
    commit_all(project.root, "a local plugin")
    env = {k: v for k, v in project.env().items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = tree_state(project.root)
    paused = project.run("--worktree", env=env)
    assert paused.code == 5, paused.stderr
    assert tree_state(project.root) == before
