"""``stepkit run --parallel N [--stack]`` end to end: real git repositories in
tmp dirs, real ``git worktree``, command coders and test commands that wait
for each other's marker files (tests/support/parallel.py), the real CLI.

No sleep orders anything here: two coders that each wait for the other's
marker only finish when their runs overlap in time; a run is killed once its
marker says where it stands.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
from pathlib import Path

import psutil
import pytest

from tests.e2e.test_e2e_terminal import Terminal, cursor_restored
from tests.support.e2e import PY, Project
from tests.support.parallel import (
    approving_graph,
    child_of,
    parallel_project,
    snapshot,
    start_parallel,
    waits,
)
from tests.support.waiting import SAFETY_S, wait_until

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

BRANCHES = {1: "stepkit/01-mul", 2: "stepkit/02-div", 3: "stepkit/03-pow"}


def branches(project: Project) -> list[str]:
    return project.git("branch", "--list", "stepkit/*", "--format=%(refname:short)").split()


def by_step(data: dict) -> dict[int, dict]:
    return {run["step"]: run for run in data["runs"]}


def finish(proc: subprocess.Popen[str]) -> tuple[int, dict, str]:
    out, err = proc.communicate(timeout=SAFETY_S)
    return proc.returncode, (json.loads(out) if out.strip().startswith("{") else {}), err


def approve(project: Project, run_id: str) -> dict:
    """Answer one paused run on its own, from the user's tree."""
    result = project.stepkit(
        "resume", run_id, "--project-dir", str(project.root), "--answer", "approve"
    )
    assert result.code == 0, result.stderr
    return result.data


# -- usage errors: one line, exit 2, nothing started ---------------------------------


@pytest.fixture
def project(tmp_path):
    return parallel_project(tmp_path)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--parallel", "0"], "--parallel: expected a number of runs at once, 1 or more"),
        (["--parallel", "two"], "--parallel: expected a number of runs at once"),
        (["--stack"], "--stack needs --parallel N"),
        (["--parallel", "2", "--step", "1"], "--step 1 runs one"),
        (["--parallel", "2", "--rerun"], "--rerun runs a complete one"),
        # what every run would refuse is refused once, before any starts
        (["--parallel", "2", "--set", "no_such_knob=1"], "--set no_such_knob"),
        (
            ["--parallel", "2", "--answer", "gate_user_review=approve"],
            "can only be answered after its question",
        ),
        (["--parallel", "2", "--reviewer", "nonsense"], "--reviewer nonsense: unknown reviewer"),
    ],
)
def test_a_usage_error_is_one_line_and_starts_nothing(project, args, says):
    result = project.run(*args)
    assert result.code == 2, result.stderr
    assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr
    assert branches(project) == [] and project.coder_calls() == 0
    assert len(project.git("worktree", "list").splitlines()) == 1


def test_a_project_outside_git_is_refused(tmp_path):
    project = parallel_project(tmp_path)
    shutil.rmtree(project.root / ".git")
    result = project.run("--parallel", "2")
    assert result.code == 2 and "is in no git repository" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and project.coder_calls() == 0


def test_a_prompt_naming_a_step_is_refused_with_parallel(project):
    result = project.stepkit(
        "run", "execute step 2", "--parallel", "2", "--project-dir", str(project.root)
    )
    assert result.code == 2 and "the prompt names step 2" in result.stderr, result.stderr
    assert branches(project) == []


def test_nothing_ready_is_a_usage_error_naming_what_each_step_waits_for(project):
    for name in ("01-mul.md", "02-div.md"):  # complete by status, but without a handoff
        path = project.plans / "steps" / name
        path.write_text(path.read_text().replace("status: pending", "status: complete"))
    result = project.run("--parallel", "2")
    assert result.code == 2, result.stderr
    assert (
        "no step is ready to run (step 3 (Add pow): waits for step 1 (Add mul): no handoff"
        in result.stderr
    )
    assert result.stderr.count("\n") == 1
    assert branches(project) == [] and project.coder_calls() == 0


# -- two independent steps at the same time -----------------------------------------


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory):
    """Steps 1 and 2 run with ``--parallel 2`` while the user's tree holds an
    uncommitted edit and an untracked file; each coder waits for the other's
    marker before it writes anything.  Then each paused run is approved on its own."""
    project = parallel_project(tmp_path_factory.mktemp("side-by-side"))
    waits(project, coder_mul=["started-div"], coder_div=["started-mul"])
    (project.root / "lint.py").write_text(
        (project.root / "lint.py").read_text() + "# the user's edit\n"
    )
    (project.root / "scratch.txt").write_text("the user's notes, never added\n")
    before = snapshot(project.root)
    ran = project.run("--parallel", "2")
    during = snapshot(project.root)
    approved = {run["step"]: approve(project, run["run_id"]) for run in ran.data.get("runs", [])}
    return project, ran, approved, before, during


def test_two_independent_steps_run_at_the_same_time(side_by_side):
    project, ran, approved, _, _ = side_by_side
    assert ran.code == 5, ran.stderr
    assert ran.data["outcome"] == "PAUSED" and ran.data["exit_code"] == 5
    runs = by_step(ran.data)
    assert sorted(runs) == [1, 2]
    # each coder finished only because the other had started before it gave up
    assert all((project.state_dir / f"coded-{name}").exists() for name in ("mul", "div"))
    assert list(project.state_dir.glob("overlapped-*"))
    for step, run in runs.items():
        assert run["outcome"] == "PAUSED" and run["exit_code"] == 5, run
        assert run["branch"] == BRANCHES[step] and run["pending"]["node"] == "gate_user_review"
    assert len({run["run_id"] for run in runs.values()}) == 2  # a run id, lock and checkpoint each
    assert {step: result["outcome"] for step, result in approved.items()} == {
        1: "STEP_COMPLETE",
        2: "STEP_COMPLETE",
    }


def test_parallel_1_runs_the_ready_steps_one_at_a_time(project):
    ran = project.run("--parallel", "1")
    assert ran.code == 5 and [run["step"] for run in ran.data["runs"]] == [1, 2], ran.stderr
    spans = []  # each run's first and last event: the second starts after the first ended
    for run in ran.data["runs"]:
        events = [
            json.loads(line)
            for line in (Path(run["run_dir"]) / "events.jsonl").read_text().splitlines()
        ]
        spans.append((events[0]["t"], events[-1]["t"]))
    assert spans[0][1] <= spans[1][0], spans
    assert not list(project.state_dir.glob("overlapped-*"))


def test_the_users_tree_stays_byte_for_byte_the_same(side_by_side):
    project, ran, approved, before, during = side_by_side
    assert ran.code == 5 and sorted(approved) == [1, 2], ran.stderr
    assert during == before
    assert snapshot(project.root) == before  # after the approvals committed the branches too
    for step in approved:
        branch = BRANCHES[step]
        assert project.git("show", f"{branch}:ops/{branch.rsplit('-', 1)[1]}.py")


def test_both_branches_merge_without_conflict_and_then_the_dependent_step_is_next(side_by_side):
    project, _, approved, _, _ = side_by_side
    assert sorted(approved) == [1, 2]
    # nobody ran stepkit init here: the runs registered the plan merge driver themselves
    for branch in (BRANCHES[1], BRANCHES[2]):
        merged = subprocess.run(
            ["git", "merge", "--no-edit", branch],
            cwd=project.root,
            capture_output=True,
            text=True,
            check=False,
            env=project.env(
                GIT_AUTHOR_NAME="t",
                GIT_AUTHOR_EMAIL="t@t",
                GIT_COMMITTER_NAME="t",
                GIT_COMMITTER_EMAIL="t@t",
            ),
        )
        assert merged.returncode == 0, merged.stdout + merged.stderr
    status = project.stepkit("status", "--project-dir", str(project.root))
    assert status.data["next"] == 3
    (pow_step,) = [s for s in status.data["steps"] if s["step"] == 3]
    assert pow_step["deps_satisfied"], pow_step["unsatisfied"]


def test_the_text_output_names_each_paused_runs_resume_command_and_stderr_a_line_per_run(project):
    ran = project.run("--parallel", "2", json_out=False)
    assert ran.code == 5, ran.stderr
    ids = [
        line.split()[1]
        for line in ran.stdout.splitlines()
        if line.startswith("Run ") and "waiting" in line
    ]
    assert len(ids) == 2
    for run_id in ids:
        named = re.findall(r"stepkit resume (\S+)", ran.stdout)  # a prefix naming the run alone
        assert any(run_id.startswith(short) for short in named), ran.stdout
    assert "--parallel: 2 run(s): 2 PAUSED; PAUSED (exit 5)" in ran.stdout
    for step, title in ((1, "Add mul"), (2, "Add div")):
        assert f"step {step} ({title}): starting" in ran.stderr
        assert f"step {step} ({title}): PAUSED" in ran.stderr
    # each is answered on its own: a resume that names no run is no guess between them
    guess = project.resume("approve")
    assert guess.code == 2 and all(run_id in guess.stderr for run_id in ids), guess.stderr


def test_on_a_terminal_each_run_keeps_one_line_redrawn_in_place(project):
    waits(project, coder_mul=["started-div"], coder_div=["started-mul"])
    term = Terminal(
        [PY, "-m", "stepkit", *project.run_args("--parallel", "2")], project.root, project.env()
    )
    try:
        term.read_until(r"step 1 \(Add mul\): \w+ · \d+\.\ds")
        assert term.wait() == 5
    finally:
        term.kill()
    lines = [line for line in term.screen.splitlines() if line.startswith("step ")]
    assert [line.split(" · ")[0] for line in lines] == [
        "step 1 (Add mul): PAUSED",
        "step 2 (Add div): PAUSED",
    ], term.screen
    assert cursor_restored(term.text)


# -- a killed child, a stopped parent --------------------------------------------------


@pytest.mark.usefixtures(
    "unconfined"
)  # unconfined: the pids it checks are the host's, not a PID namespace's
def test_sigkill_of_one_child_leaves_the_other_running_and_its_own_worktree_resumable(project):
    """Step 1 is killed while its tests gate runs; step 2's coder only goes on
    once that kill happened, and its run still reaches its end."""
    waits(project, tests_mul=["killed-mul"], coder_div=["killed-mul"])
    parent = start_parallel(project, "--parallel", "2", "--json")
    wait_until(
        lambda: (
            (project.state_dir / "testing-mul").exists()
            and (project.state_dir / "started-div").exists()
        ),
        "both runs under way",
        parent,
    )
    killed = psutil.Process(child_of(parent, 1))
    killed.kill()
    killed.wait(SAFETY_S)
    (project.state_dir / "killed-mul").write_text("")
    code, data, err = finish(parent)
    runs = by_step(data)
    assert runs[2]["outcome"] == "PAUSED", err
    assert runs[1]["outcome"] == "INTERRUPTED" and runs[1]["exit_code"] == 137, runs[1]
    assert runs[1]["signal"] == "SIGKILL" and runs[1]["run_id"]
    assert code == 137 and data["exit_code"] == 137
    # its tests gate, orphaned by the kill and let go by the marker, has ended; the killed
    # run goes on from its checkpoint in its own worktree
    wait_until(
        lambda: not psutil.pid_exists(int((project.state_dir / "testing-mul").read_text())),
        "the killed run's tests gate gone",
    )
    resumed = project.stepkit("resume", runs[1]["run_id"], "--project-dir", str(project.root))
    assert resumed.code == 5 and resumed.outcome == "PAUSED", resumed.stderr
    assert approve(project, runs[1]["run_id"])["outcome"] == "STEP_COMPLETE"
    assert project.git("show", f"{BRANCHES[1]}:ops/mul.py")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_to_the_parent_stops_every_child_as_interrupted(project, sig):
    """Both runs are stopped in their tests gates (a coder cut off mid-edit is never
    re-run: its resume fails the step), and each goes on with ``stepkit resume``."""
    waits(project, tests_mul=["never"], tests_div=["never"])
    parent = start_parallel(project, "--parallel", "2", "--json")
    wait_until(
        lambda: all((project.state_dir / f"testing-{n}").exists() for n in ("mul", "div")),
        "both tests gates under way",
        parent,
    )
    parent.send_signal(sig)
    code, data, err = finish(parent)
    assert (
        code == 128 + sig and data["exit_code"] == 128 + sig and data["outcome"] == "INTERRUPTED"
    ), err
    runs = by_step(data)
    assert {step: run["outcome"] for step, run in runs.items()} == {
        1: "INTERRUPTED",
        2: "INTERRUPTED",
    }
    assert all(run["exit_code"] == 128 + sig for run in runs.values())
    status = project.stepkit("status", "--project-dir", str(project.root))
    assert sorted(
        (run["step"], run["run_id"], run["state"]) for run in status.data["worktree_runs"]
    ) == [(1, runs[1]["run_id"], "interrupted"), (2, runs[2]["run_id"], "interrupted")]
    resumed = project.stepkit("resume", runs[2]["run_id"], "--project-dir", str(project.root))
    assert resumed.code == 5 and resumed.outcome == "PAUSED", resumed.stderr


# -- --stack ---------------------------------------------------------------------------


def test_stack_starts_a_dependent_step_from_its_dependencys_branch(project, tmp_path):
    path = project.plans / "steps" / "02-div.md"
    path.write_text(path.read_text().replace("depends_on: []", "depends_on: [1]"))
    project.git("commit", "-qam", "div after mul")
    ran = project.run(
        "--parallel",
        "2",
        "--stack",
        "--graph",
        str(approving_graph(tmp_path)),
        "--answer",
        "gate_user_review=approve",
    )
    assert ran.code == 0, ran.stderr
    assert [(run["step"], run["outcome"]) for run in ran.data["runs"]] == [
        (1, "STEP_COMPLETE"),
        (2, "STEP_COMPLETE"),
        (3, "STEP_COMPLETE"),
    ]
    # each stacked branch holds the one it started from: div saw mul, pow saw both
    for older, newer in ((1, 2), (2, 3)):
        ancestor = subprocess.run(
            ["git", "merge-base", "--is-ancestor", BRANCHES[older], BRANCHES[newer]],
            cwd=project.root,
            check=False,
        )
        assert ancestor.returncode == 0, f"{BRANCHES[newer]} did not start from {BRANCHES[older]}"
    assert project.git("show", f"{BRANCHES[2]}:ops/mul.py")


def test_without_stack_a_dependent_step_waits_for_the_users_branch(project, tmp_path):
    path = project.plans / "steps" / "02-div.md"
    path.write_text(path.read_text().replace("depends_on: []", "depends_on: [1]"))
    project.git("commit", "-qam", "div after mul")
    ran = project.run(
        "--parallel",
        "2",
        "--graph",
        str(approving_graph(tmp_path)),
        "--answer",
        "gate_user_review=approve",
        json_out=False,
    )
    assert ran.code == 0, ran.stderr
    assert "step 2 (Add div): waits for step 1 (Add mul): no handoff" in ran.stdout
    assert branches(project) == [BRANCHES[1]]


def test_merge_makes_a_dependent_step_ready_once_its_dependency_is_merged(project, tmp_path):
    """1 → 2 → 3 (3 after 1 and 2): each run merges its branch into the user's;
    the plan repo, read again when a run ends, then has the next step ready."""
    path = project.plans / "steps" / "02-div.md"
    path.write_text(path.read_text().replace("depends_on: []", "depends_on: [1]"))
    project.git("commit", "-qam", "div after mul")
    ran = project.run(
        "--parallel",
        "2",
        "--merge",
        "--graph",
        str(approving_graph(tmp_path)),
        "--answer",
        "gate_user_review=approve",
    )
    assert ran.code == 0, ran.stderr
    assert [(run["step"], run["outcome"]) for run in ran.data["runs"]] == [
        (1, "STEP_COMPLETE"),
        (2, "STEP_COMPLETE"),
        (3, "STEP_COMPLETE"),
    ]
    status = project.stepkit("status", "--project-dir", str(project.root))
    assert status.data["next"] is None
    assert [step["status"] for step in status.data["steps"]] == ["complete"] * 3


def test_a_step_paused_in_its_worktree_is_not_started_again(project):
    first = project.run("--worktree", "--step", "1")
    assert first.code == 5, first.stderr
    ran = project.run("--parallel", "2", json_out=False)
    assert ran.code == 5, ran.stderr
    assert "== step 2 (Add div): PAUSED" in ran.stdout and "== step 1" not in ran.stdout
    assert f"step 1 (Add mul): paused in {first.data['worktree']}" in ran.stdout
    named = re.findall(r"stepkit resume (\S+)", ran.stdout)
    assert any(first.data["run_id"].startswith(short) for short in named), ran.stdout


#: a project plugin adding an option to ``run``; each run writes what it was given
STEPCONF = """
import os, pathlib
import stepkit

@stepkit.hookimpl
def stepkit_add_options(parser, command):
    if command == "run":
        parser.add_argument("--colour", default="grey")
        parser.add_argument("--loud", action="store_true")
        parser.add_argument("--tag", action="append", default=[])

@stepkit.hookimpl
def stepkit_configure(config, settings):
    options = settings["options"]
    if settings["step"] != "next":
        state = pathlib.Path(os.environ["E2E_STATE_DIR"])
        (state / f"options-{settings['step']}").write_text(
            f"{options.get('colour')} {options.get('loud')} {options.get('tag')}")
"""


def test_options_a_plugin_added_reach_every_run(project, tmp_path):
    (project.root / "stepconf.py").write_text(STEPCONF)
    project.git("add", "stepconf.py")
    project.git("commit", "-qm", "a plugin with options")
    ran = project.run("--parallel", "2", "--colour", "teal", "--loud", "--tag", "a", "--tag=-b")
    assert ran.code == 5, ran.stderr
    for step in (1, 2):
        assert (project.state_dir / f"options-{step}").read_text() == "teal True ['a', '-b']"


def test_a_merge_by_a_sibling_run_is_no_tamper_flag_of_the_run_still_going(project, tmp_path):
    """Run 1 completes and merges into the user's branch while run 2's tests
    gate runs (it waits until the merge has put ops/mul.py in the user's
    tree): stepkit's own change to the user's tree is not the coder's."""
    waits(project, tests_div=[str(project.root / "ops" / "mul.py")])
    ran = project.run(
        "--parallel",
        "2",
        "--merge",
        "--graph",
        str(approving_graph(tmp_path)),
        "--answer",
        "gate_user_review=approve",
    )
    assert ran.code == 0, ran.stderr
    runs = by_step(ran.data)
    assert [runs[step]["outcome"] for step in (1, 2, 3)] == ["STEP_COMPLETE"] * 3
    for step in (1, 2, 3):
        state = json.loads((Path(runs[step]["run_dir"]) / "state.json").read_text())["state"]
        assert state["tamper_flags"] == [], (step, state["tamper_flags"])
