"""Plan-repo merges never lose anything: two branches of one plan, each
adding NOTES.md facts and each annotating the same later step's Edge cases
(with stepkit's own edits), merge with a real ``git merge`` once the plan
merge driver is registered: every fact and every annotation kept.
A conflict elsewhere (a frontmatter status, a step's body) stays a conflict,
and without the driver the same merge conflicts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit.planrepo.edits import append_edge_case, set_status
from stepkit.planrepo.mergesetup import DRIVER_NAME, register_merge_driver
from stepkit.planrepo.model import PlanRepo
from stepkit.planrepo.stepstate import StepStates
from stepkit.protocol.handoff.notes import append_notes
from tests.support.cli import stepkit

NOTES = "# Notes\n\n- The API is versioned under /v1 (step 1)\n"


def plan(step: int, title: str, depends_on: list[int]) -> str:
    return (
        f"---\nstep: {step}\ntitle: {title}\ndepends_on: {depends_on}\nstatus: pending\n---\n\n"
        f"## Objective\n{title}.\n\n## Tasks\n- Implement {title.lower()}.\n\n"
        "## Edge cases\n\n- None yet.\n\n## Out of scope\n\n- Roots.\n"
    )


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    if check:
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project whose plan has steps 1-3 (2 and 3 depend on 1), committed on main."""
    root = tmp_path / "project"
    steps = root / "plans" / "steps"
    steps.mkdir(parents=True)
    (root / "plans" / "handoffs").mkdir()
    (root / "plans" / "NOTES.md").write_text(NOTES)
    (steps / "01-add.md").write_text(plan(1, "Add", []))
    (steps / "02-mul.md").write_text(plan(2, "Mul", [1]))
    (steps / "03-pow.md").write_text(plan(3, "Pow", [1, 2]))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plan")
    return root


def branch(root: Path, name: str, facts: list[str], edge_cases: list[str], step: int) -> None:
    """A branch from main whose step ``step`` added NOTES facts and annotated step 3."""
    git(root, "checkout", "-q", "-b", name, "main")
    append_notes(root / "plans" / "NOTES.md", facts, step)
    for text in edge_cases:
        assert append_edge_case(root / "plans" / "steps" / "03-pow.md", text)
    git(root, "commit", "-q", "-am", f"step {step}")


def two_branches(root: Path) -> None:
    branch(
        root,
        "one",
        ["Money is stored in cents", "Dates are UTC"],
        ["negative exponents", "a zero base"],
        step=1,
    )
    branch(root, "two", ["The CLI exits 2 on bad input"], ["huge exponents", "a zero base"], step=2)
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-edit", "one")


def bullets(path: Path, section_start: str) -> list[str]:
    text = path.read_text()
    body = text[text.index(section_start) :] if section_start else text
    body = body.split("\n## ", 1)[0] if section_start else body
    return [line for line in body.splitlines() if line.startswith("- ")]


def test_both_branches_facts_and_annotations_merge_every_one_kept(repo):
    register_merge_driver(repo, repo / "plans")
    two_branches(repo)

    merged = git(repo, "merge", "--no-edit", "two", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert bullets(repo / "plans" / "NOTES.md", "") == [
        "- The API is versioned under /v1 (step 1)",
        "- Money is stored in cents (step 1)",
        "- Dates are UTC (step 1)",
        "- The CLI exits 2 on bad input (step 2)",
    ]
    step3 = repo / "plans" / "steps" / "03-pow.md"
    assert bullets(step3, "## Edge cases") == [  # a bullet both added is each's: kept twice
        "- None yet.",
        "- negative exponents",
        "- a zero base",
        "- huge exponents",
        "- a zero base",
    ]
    text = step3.read_text()
    assert "<<<<<<<" not in text and text.endswith("## Out of scope\n\n- Roots.\n")
    assert git(repo, "status", "--porcelain").stdout == ""


def test_without_the_driver_the_same_merge_conflicts(repo):
    two_branches(repo)

    merged = git(repo, "merge", "--no-edit", "two", check=False)

    assert merged.returncode != 0
    assert "CONFLICT" in merged.stdout
    assert "<<<<<<<" in (repo / "plans" / "NOTES.md").read_text()
    assert "<<<<<<<" in (repo / "plans" / "steps" / "03-pow.md").read_text()


def test_edge_cases_section_created_at_the_end_on_both_branches_merges(repo):
    """A step without an Edge cases section: each branch's append creates one
    at the end of the file; the merge has one heading and both bullets."""
    step = repo / "plans" / "steps" / "02-mul.md"
    text = step.read_text()
    step.write_text(text[: text.index("## Edge cases")].rstrip("\n") + "\n")
    git(repo, "commit", "-q", "-am", "no edge cases")
    register_merge_driver(repo, repo / "plans")
    for name, case in (("one", "overflow"), ("two", "underflow")):
        git(repo, "checkout", "-q", "-b", name, "main")
        assert append_edge_case(step, case)
        git(repo, "commit", "-q", "-am", name)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "one")

    merged = git(repo, "merge", "--no-edit", "two", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert step.read_text().count("## Edge cases") == 1
    assert bullets(step, "## Edge cases") == ["- overflow", "- underflow"]


def test_a_conflicting_frontmatter_status_stays_a_conflict(repo):
    register_merge_driver(repo, repo / "plans")
    step3 = repo / "plans" / "steps" / "03-pow.md"
    for name, status, case in (("one", "complete", "first"), ("two", "in-progress", "second")):
        git(repo, "checkout", "-q", "-b", name, "main")
        set_status(step3, status)
        append_edge_case(step3, case)
        git(repo, "commit", "-q", "-am", name)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "one")

    merged = git(repo, "merge", "--no-edit", "two", check=False)

    assert merged.returncode != 0
    assert "CONFLICT" in merged.stdout
    text = step3.read_text()
    assert "<<<<<<<" in text and "status: complete" in text and "status: in-progress" in text
    assert text.index("<<<<<<<") < text.index("## Objective")  # the status hunk, not the edge cases
    assert bullets(step3, "## Edge cases")[-2:] == ["- first", "- second"]


def test_a_conflicting_body_line_stays_a_conflict(repo):
    register_merge_driver(repo, repo / "plans")
    step2 = repo / "plans" / "steps" / "02-mul.md"
    for name, objective in (("one", "Multiply ints."), ("two", "Multiply floats.")):
        git(repo, "checkout", "-q", "-b", name, "main")
        text = step2.read_text()
        step2.write_text(text.replace("## Objective\n", f"## Objective\n{objective}\n", 1))
        git(repo, "commit", "-q", "-am", name)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "one")

    merged = git(repo, "merge", "--no-edit", "two", check=False)

    assert merged.returncode != 0
    text = step2.read_text()
    assert "<<<<<<<" in text and "Multiply ints." in text and "Multiply floats." in text


def test_a_fact_rewritten_on_one_branch_is_not_unioned(repo):
    """Union is for additions only: a branch that changed an existing fact
    while the other appended leaves the conflict to the user (nothing is
    silently doubled)."""
    register_merge_driver(repo, repo / "plans")
    notes = repo / "plans" / "NOTES.md"
    git(repo, "checkout", "-q", "-b", "one", "main")
    notes.write_text(NOTES.replace("/v1", "/v2") + "- Money is stored in cents (step 1)\n")
    git(repo, "commit", "-q", "-am", "one")
    branch(repo, "two", ["Dates are UTC"], [], step=2)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "one")

    merged = git(repo, "merge", "--no-edit", "two", check=False)

    assert merged.returncode != 0
    assert "<<<<<<<" in notes.read_text()


def test_registration_is_idempotent_and_keeps_other_attributes(repo):
    common = Path(
        git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
    )
    attributes = common / "info" / "attributes"
    attributes.parent.mkdir(exist_ok=True)
    attributes.write_text("*.png binary\n")

    register_merge_driver(repo, repo / "plans")
    once = attributes.read_text()
    # another run writing the config holds its lock: a registration with
    # nothing to change leaves the config alone, so runs side by side never race on it
    (common / "config.lock").write_text("")
    register_merge_driver(repo, repo / "plans")
    (common / "config.lock").unlink()

    assert attributes.read_text() == once
    assert once.startswith("*.png binary\n")
    assert once.count(f"merge={DRIVER_NAME}") == 2
    check = git(
        repo, "check-attr", "merge", "--", "plans/NOTES.md", "plans/steps/03-pow.md", "src/app.py"
    ).stdout
    assert check.splitlines() == [
        f"plans/NOTES.md: merge: {DRIVER_NAME}",
        f"plans/steps/03-pow.md: merge: {DRIVER_NAME}",
        "src/app.py: merge: unspecified",
    ]
    driver = git(repo, "config", "--get-all", f"merge.{DRIVER_NAME}.driver").stdout.splitlines()
    assert driver == [f"{sys.executable} -m stepkit merge-driver %O %A %B %P"]
    assert git(repo, "status", "--porcelain").stdout == ""  # nothing written into the tree


def test_registration_reaches_a_linked_worktree(repo, tmp_path):
    """info/attributes and the config live in the common git dir: a step's
    worktree merges with the driver too."""
    register_merge_driver(repo, repo / "plans")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked), "main")
    check = git(linked, "check-attr", "merge", "--", "plans/NOTES.md").stdout
    assert check.strip() == f"plans/NOTES.md: merge: {DRIVER_NAME}"


def test_a_plans_dir_in_a_subdirectory_of_the_work_tree(tmp_path):
    root = tmp_path / "mono"
    project = root / "services" / "api"
    (project / "my plans" / "steps").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    register_merge_driver(project, project / "my plans")
    check = git(
        root,
        "check-attr",
        "merge",
        "--",
        "services/api/my plans/NOTES.md",
        "services/api/my plans/steps/01-x.md",
        "services/api/NOTES.md",
    ).stdout
    assert check.splitlines() == [
        f"services/api/my plans/NOTES.md: merge: {DRIVER_NAME}",
        f"services/api/my plans/steps/01-x.md: merge: {DRIVER_NAME}",
        "services/api/NOTES.md: merge: unspecified",
    ]


def test_init_in_a_git_repo_registers_the_driver_and_says_so(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    done = stepkit("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Merge driver: {DRIVER_NAME}" in done.stdout
    check = git(
        tmp_path, "check-attr", "merge", "--", "plans/NOTES.md", "plans/steps/01-first-step.md"
    ).stdout
    assert check.count(f"merge: {DRIVER_NAME}") == 2
    assert not (tmp_path / ".gitattributes").exists()


def test_init_outside_git_says_nothing_of_a_merge_driver(tmp_path):
    done = stepkit("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Merge driver" not in done.stdout
    # the plan repo, and the proven (here: unproven, commented) [commands] of stepkit.toml
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plans", "stepkit.toml"]


@pytest.mark.parametrize("newline, final", [("\r\n", "\r\n"), ("\n", ""), ("\r\n", "")])
def test_crlf_files_and_files_without_a_final_newline_merge_too(repo, newline, final):
    """Variants the union was not written for: CRLF plan files, and an Edge
    cases section ending the file without a final newline."""
    notes = repo / "plans" / "NOTES.md"
    step = repo / "plans" / "steps" / "02-mul.md"
    notes.write_bytes(NOTES.replace("\n", newline).encode())
    text = step.read_text()
    step.write_bytes(
        (text[: text.index("\n\n## Out of scope")] + "\n")
        .replace("\n", newline)
        .removesuffix(newline)
        .encode()
        + final.encode()
    )
    git(repo, "commit", "-q", "-am", "variant")
    register_merge_driver(repo, repo / "plans")
    for name, fact in (("one", "Uses cents"), ("two", "Uses UTC")):
        git(repo, "checkout", "-q", "-b", name, "main")
        append_notes(notes, [fact], 2)
        assert append_edge_case(step, f"{fact.lower()} edge")
        git(repo, "commit", "-q", "-am", name)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "one")

    merged = git(repo, "merge", "--no-edit", "two", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    notes_text = notes.read_bytes().decode()
    assert (
        notes_text.count("- Uses cents (step 2)") == 1
        and notes_text.count("- Uses UTC (step 2)") == 1
    )
    step_text = step.read_bytes().decode()
    assert step_text.splitlines()[-3:] == ["- None yet.", "- uses cents edge", "- uses utc edge"]
    if newline == "\r\n":
        assert "\n" not in notes_text.replace("\r\n", "") and "\n" not in step_text.replace(
            "\r\n", ""
        )


def test_register_command_in_a_clone_whose_plan_exists(repo, tmp_path):
    """A clone gets no driver from the repository (git config and info/ do
    not travel); ``stepkit merge-driver --register`` adds it there, as init
    would have."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert git(clone, "check-attr", "merge", "--", "plans/NOTES.md").stdout.endswith(
        "unspecified\n"
    )

    done = stepkit("merge-driver", "--register", cwd=clone)

    assert done.returncode == 0, done.stderr
    assert f"Merge driver: {DRIVER_NAME}" in done.stdout
    assert (
        git(clone, "check-attr", "merge", "--", "plans/NOTES.md")
        .stdout.strip()
        .endswith(DRIVER_NAME)
    )


@pytest.mark.parametrize(
    "args", [["--register"], [], ["a", "b", "c"], ["--register", "a", "b", "c", "d"]]
)
def test_merge_driver_usage_errors_are_one_line(tmp_path, args):
    done = stepkit("merge-driver", *args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_two_completed_steps_merge_and_the_step_depending_on_both_is_ready(tmp_path):
    """What two parallel steps leave on their branches: each its status,
    its handoff, NOTES facts and an annotation of the step that depends on
    both. Merged, every one of them is there and that step is the one ready."""
    root = tmp_path / "project"
    steps = root / "plans" / "steps"
    steps.mkdir(parents=True)
    (root / "plans" / "handoffs").mkdir()
    (root / "plans" / "handoffs" / ".gitkeep").touch()
    (root / "plans" / "NOTES.md").write_text(NOTES)
    for number, title, deps in ((1, "Left", []), (2, "Right", []), (3, "Join", [1, 2])):
        (steps / f"{number:02d}-{title.lower()}.md").write_text(plan(number, title, deps))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plan")
    register_merge_driver(root, root / "plans")
    for number, name in ((1, "left"), (2, "right")):
        git(root, "checkout", "-q", "-b", f"stepkit/{number:02d}-{name}", "main")
        set_status(steps / f"{number:02d}-{name}.md", "complete")
        (root / "plans" / "handoffs" / f"{number:02d}-{name}.md").write_text(
            f"---\nstep: {number}\nresult: complete\n---\n\n## Summary\n{name} done.\n"
        )
        append_notes(root / "plans" / "NOTES.md", [f"{name} lives in {name}.py"], number)
        assert append_edge_case(steps / "03-join.md", f"{name} may be empty")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", name)
    git(root, "checkout", "-q", "main")

    for name in ("stepkit/01-left", "stepkit/02-right"):
        merged = git(root, "merge", "--no-edit", name, check=False)
        assert merged.returncode == 0, merged.stdout + merged.stderr

    repo = PlanRepo.load(root / "plans")
    assert [step.number for step in StepStates(repo).ready()] == [3]
    assert [(s.number, s.status) for s in repo.steps] == [
        (1, "complete"),
        (2, "complete"),
        (3, "pending"),
    ]
    assert sorted(repo.handoffs) == [1, 2]
    assert bullets(root / "plans" / "NOTES.md", "")[-2:] == [
        "- left lives in left.py (step 1)",
        "- right lives in right.py (step 2)",
    ]
    assert bullets(steps / "03-join.md", "## Edge cases")[-2:] == [
        "- left may be empty",
        "- right may be empty",
    ]


@pytest.mark.parametrize("registered", [True, False])
def test_merge_tree_sees_the_driver_as_merge_does(repo, registered):
    """``git merge-tree --write-tree`` (a merge computed without touching the
    tree, as a check before merging a step's branch) runs the driver too."""
    if registered:
        register_merge_driver(repo, repo / "plans")
    two_branches(repo)

    tree = git(
        repo,
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        "HEAD",
        "two",
        check=False,
    )

    if registered:
        assert tree.returncode == 0, tree.stdout
    else:
        assert tree.returncode == 1
        assert tree.stdout.splitlines()[1:] == ["plans/NOTES.md", "plans/steps/03-pow.md"]


def test_notes_sections_that_share_lines_and_code_fences_keep_every_line(repo):
    """The defect a real merge showed: "- Run it with:" under "## Step 3
    notes" vanished because "## Step 2 notes" had it too, and a pair of code
    fences went with it, leaving a command outside its block."""
    register_merge_driver(repo, repo / "plans")
    notes = repo / "plans" / "NOTES.md"
    added = {
        "one": "\n## Step 2 notes\n\n- Run it with:\n\n```sh\nmake serve\n```\n",
        "two": "\n## Step 3 notes\n\n- Run it with:\n\n```sh\nmake worker\n```\n",
    }
    for name, text in added.items():
        git(repo, "checkout", "-q", "-b", name, "main")
        notes.write_text(NOTES + text)
        git(repo, "commit", "-q", "-am", name)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "one")

    merged = git(repo, "merge", "--no-edit", "two", check=False)

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert notes.read_text() == NOTES + added["one"] + added["two"]
