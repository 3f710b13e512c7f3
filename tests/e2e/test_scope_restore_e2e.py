"""End to end, through the CLI: what the plan-repo restore keeps, that it never
writes through a link, a plans dir that holds the project, and a coder that
cannot hide what it did.

Real runs: a real git project, real gate commands, a coder that is a shell
script doing what a careless or hostile coder does (hand edits, symlinks to
files outside the project, deleting stepkit's run store), a real submodule.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, ORIENT, PY, command_coder, flag_texts, make_project, sh
from tests.support.gitrepo import init_repo

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow


#: The run store, as a coder's shell finds it.
STORE = '"$(git rev-parse --git-common-dir)/stepkit/main"'


def shell_coder(project, body: str) -> str:
    """A ``--coder`` spec: a shell script run in the project dir; it writes
    the good ``calc.mul`` first, then runs ``body``, then says CODER_COMPLETE."""
    good = project.state_dir / "good_calc.py"
    good.write_text(GOOD_MUL)
    script = project.state_dir / "coder.sh"
    script.write_text(
        f"set -e\ncat > /dev/null\ncp {shlex.quote(str(good))} calc.py\n{body}\necho CODER_COMPLETE\n"
    )
    return command_coder("sh", script)


def paused_state(project, result) -> dict:
    """The checkpointed state of a run that paused at the final approval gate."""
    assert result.code == 5, result.stderr + result.stdout
    assert result.data["pending"]["node"] == "gate_user_review"
    return run_state(project, result.data["run_id"])


def run_state(project, run_id: str) -> dict:
    return json.loads((store_dir(project.root) / "runs" / run_id / "state.json").read_text())[
        "state"
    ]


def kept(project, result, *parts: str) -> Path:
    return store_dir(project.root) / "runs" / result.data["run_id"] / "displaced" / Path(*parts)


#: what the scripted handoff appends to NOTES.md
NOTES_FACT = "- calc functions take two numbers and return one. (step 1)\n"


def rel(project, path: Path) -> str:
    return path.relative_to(project.root).as_posix()


# -- 2. restores that lose nothing ---------------------------------------------


def test_a_hand_edit_and_a_new_plan_made_while_the_coder_runs_are_kept(project):
    notes = (project.plans / "NOTES.md").read_bytes()
    coder = shell_coder(
        project,
        "echo '- my hand edit' >> plans/NOTES.md\n"
        "printf 'step 4 by hand\\n' > plans/steps/04-x.md\n",
    )
    result = project.run(coder=coder)
    state = paused_state(project, result)
    # the plan repo is undone, as before (the handoff then appended its facts)
    assert (project.plans / "NOTES.md").read_text() == notes.decode() + NOTES_FACT
    assert not (project.plans / "steps" / "04-x.md").exists()
    edited = kept(project, result, "coder-1", "plans", "NOTES.md")
    added = kept(project, result, "coder-1", "plans", "steps", "04-x.md")
    assert edited.read_bytes() == notes + b"- my hand edit\n"
    assert added.read_text() == "step 4 by hand\n"
    (deviation,) = state["scope_deviations"]
    assert (
        f"plans/NOTES.md (modified; restored; the changed file kept at {rel(project, edited)})"
        in deviation
    )
    assert f"plans/steps/04-x.md (added; removed, kept at {rel(project, added)})" in deviation
    draft = Path(result.data["handoff_draft"]).read_text()  # approved, it goes to plans/
    assert rel(project, edited) in draft.split("## Deviations", 1)[1]


def test_a_formatter_that_formats_the_plan_repo_is_undone_kept_and_flagged(project):
    notes = (project.plans / "NOTES.md").read_bytes()
    fmt = project.state_dir / "fmt.py"
    fmt.write_text(
        "import pathlib\np = pathlib.Path('plans/NOTES.md')\np.write_text(p.read_text().upper())\n"
    )
    config = (
        (project.root / "stepkit.toml")
        .read_text()
        .replace('format = ""', f'format = "{sh(PY, fmt)}"')
    )
    (project.root / "stepkit.toml").write_text(config)
    project.git("commit", "-qam", "a formatter")
    result = project.run(coder=shell_coder(project, ""))
    state = paused_state(project, result)
    assert (project.plans / "NOTES.md").read_text() == notes.decode() + NOTES_FACT
    copy = kept(project, result, "format-1", "plans", "NOTES.md")
    assert copy.read_bytes() == notes.upper()
    assert state["gates_edited_plan_repo"] == ["format"]
    (deviation,) = state["scope_deviations"]
    assert deviation.startswith("the format gate edited the plan repo; undone by the harness:")
    assert (
        f"plans/NOTES.md (modified; restored; the changed file kept at {rel(project, copy)})"
        in deviation
    )


def test_a_test_suite_that_writes_into_the_plan_repo_is_undone_kept_and_flagged(project):
    """Any gate, not only the formatter: here the tests gate appends to NOTES.md."""
    notes = (project.plans / "NOTES.md").read_bytes()
    suite = project.state_dir / "suite.py"
    suite.write_text(
        "import pathlib, runpy, sys\n"
        "p = pathlib.Path('plans/NOTES.md')\np.write_text(p.read_text() + '- written by a test\\n')\n"
        "sys.argv = ['check.py']\nsys.path.insert(0, '.')\nrunpy.run_path('check.py', run_name='__main__')\n"
    )
    config = (
        (project.root / "stepkit.toml")
        .read_text()
        .replace(f'test = "{PY} check.py"', f'test = "{sh(PY, suite)}"')
    )
    (project.root / "stepkit.toml").write_text(config)
    project.git("commit", "-qam", "a suite that writes the plan repo")
    result = project.run(coder=shell_coder(project, ""))
    state = paused_state(project, result)
    assert (project.plans / "NOTES.md").read_text() == notes.decode() + NOTES_FACT
    copy = kept(project, result, "tests-1", "plans", "NOTES.md")
    assert copy.read_bytes() == notes + b"- written by a test\n"
    assert state["gates_edited_plan_repo"] == ["tests"]
    (deviation,) = state["scope_deviations"]
    assert deviation.startswith("the tests gate edited the plan repo; undone by the harness:")


# -- 3. no write through links -------------------------------------------------


def test_a_plan_file_replaced_by_a_link_to_an_outside_file_never_writes_that_file(
    project, tmp_path
):
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious, not the project's\n")
    plan = (project.plans / "steps" / "02-div.md").read_bytes()
    coder = shell_coder(
        project,
        f"rm plans/steps/02-div.md\nln -s {shlex.quote(str(outside))} plans/steps/02-div.md\n",
    )
    result = project.run(coder=coder)
    state = paused_state(project, result)
    assert outside.read_bytes() == b"precious, not the project's\n"
    restored = project.plans / "steps" / "02-div.md"
    assert not restored.is_symlink() and restored.read_bytes() == plan
    link = kept(project, result, "coder-1", "plans", "steps", "02-div.md")
    assert link.is_symlink() and os.readlink(link) == str(outside)
    assert f"replaced by a symlink to {outside}" in state["scope_deviations"][0]


def test_a_steps_dir_replaced_by_a_link_to_an_outside_dir_never_writes_there(project, tmp_path):
    outside = tmp_path / "outside-steps"
    outside.mkdir()
    (outside / "02-div.md").write_bytes(b"someone else's file\n")
    before = {p.name: p.read_bytes() for p in (project.plans / "steps").iterdir()}
    coder = shell_coder(
        project,
        f"mv plans/steps plans/steps.old\nln -s {shlex.quote(str(outside))} plans/steps\nrm -r plans/steps.old\n",
    )
    result = project.run(coder=coder)
    paused_state(project, result)
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == {
        "02-div.md": b"someone else's file\n"
    }
    steps = project.plans / "steps"
    assert not steps.is_symlink()
    after = {p.name: p.read_bytes() for p in steps.iterdir()}
    assert after.keys() == before.keys() and after["02-div.md"] == before["02-div.md"]
    assert os.readlink(kept(project, result, "coder-1", "plans", "steps")) == str(outside)


# -- 4. a plans dir that is the project dir, or holds it -------------------------


def flat_project(tmp_path, plans_at: str):
    """The e2e project with its plan repo moved to the project root (``.``)
    or to the directory holding the project (``..``)."""
    project = make_project(tmp_path)
    target = project.root if plans_at == "." else project.root.parent
    for name in ("steps", "NOTES.md"):
        os.replace(project.plans / name, target / name)
    project.plans.rmdir()
    project.git("add", "-A")
    project.git("commit", "-qm", "plans moved")
    return project, target


@pytest.mark.parametrize("plans_at", [".", ".."])
def test_a_plans_dir_holding_the_project_is_only_its_plan_entries(tmp_path, plans_at, request):
    if plans_at == "..":  # confined, the coder cannot write the plan repo beside its tree
        request.getfixturevalue("unconfined")
    project, plans = flat_project(tmp_path, plans_at)
    notes = (plans / "NOTES.md").read_bytes()
    coder = shell_coder(
        project,
        "echo 'coder notes' >> NOTES.md\necho 'x = 1' > extra.py\n"
        if plans_at == "."
        else "echo 'coder notes' >> ../NOTES.md\necho 'x = 1' > extra.py\n",
    )
    result = project.run("--plans-dir", plans_at, coder=coder)
    state = paused_state(project, result)
    assert (project.root / "calc.py").read_text() == GOOD_MUL  # the coder's work stays
    assert (project.root / "extra.py").exists()
    assert sorted(state["changed_files"]) == ["calc.py", "extra.py"]
    assert (plans / "NOTES.md").read_text() == notes.decode() + NOTES_FACT
    assert "NOTES.md (modified; restored;" in state["scope_deviations"][0]
    assert list((store_dir(project.root) / "runs" / result.data["run_id"] / "logs").iterdir())
    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE", done.stdout
    assert (plans / "handoffs").is_dir()


# -- 5. a coder cannot hide what it did --------------------------------------------


@pytest.mark.usefixtures("unconfined")  # confined, the run store is not there to delete
def test_deleting_the_scope_snapshot_does_not_hide_a_deleted_test(project):
    (project.root / "tests").mkdir()
    (project.root / "tests" / "test_calc.py").write_text("def test_add():\n    assert True\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "a test")
    coder = shell_coder(
        project, f"rm tests/test_calc.py\nrm -f {STORE}/runs/*/scope_snapshot.json\n"
    )
    state = paused_state(project, project.run(coder=coder))
    assert "tests/test_calc.py" in state["changed_files"]
    assert "deleted test file: tests/test_calc.py" in flag_texts(state)
    assert "--- a/tests/test_calc.py" in state["diff"]
    assert any(
        "touched stepkit's run store" in flag and "scope_snapshot.json (deleted)" in flag
        for flag in flag_texts(state)
    )


@pytest.mark.usefixtures("unconfined")  # confined, the run store is not there to delete
def test_deleting_the_object_store_keeps_the_diff_and_the_restore(project):
    (project.root / "wip.py").write_text(
        "# the user's work in progress\n"
    )  # untracked: kept in the store
    later = (project.plans / "steps" / "02-div.md").read_bytes()
    coder = shell_coder(
        project,
        f"echo 'x = 2' > wip.py\nrm -rf {STORE}/objects\n"
        "sed -i 's/^Add div\\./Do something else./' plans/steps/02-div.md\n",
    )
    state = paused_state(project, project.run(coder=coder))
    assert (project.plans / "steps" / "02-div.md").read_bytes() == later
    assert "-# the user's work in progress\n+x = 2\n" in state["diff"]
    assert any(
        "touched stepkit's run store" in flag and ".git/stepkit/main/objects" in flag
        for flag in flag_texts(state)
    )


def test_an_edit_inside_a_submodule_is_a_change(project, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helper.py").write_text("def helper():\n    return 1\n")
    init_repo(lib, message="lib")
    project.git(
        "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib"
    )
    project.git("commit", "-qm", "a submodule")
    coder = shell_coder(
        project, "printf 'def helper():\\n    return 2  # noqa\\n' > vendor/lib/helper.py\n"
    )
    state = paused_state(project, project.run(coder=coder))
    assert state["changed_files"] == ["calc.py", "vendor/lib/helper.py"]
    assert "--- a/vendor/lib/helper.py\n+++ b/vendor/lib/helper.py\n" in state["diff"]
    assert "-    return 1\n+    return 2  # noqa\n" in state["diff"]
    assert "new # noqa in vendor/lib/helper.py (+1)" in flag_texts(state)


def test_a_snapshot_altered_while_the_run_is_paused_is_retaken_and_flagged(project):
    deviation = {**ORIENT, "has_major_deviation": True, "deviation_summary": "calc.py moved"}
    paused = project.run(engine=project.script(orient=deviation), coder=shell_coder(project, ""))
    assert paused.data["pending"]["node"] == "gate_deviation"
    snapshot = store_dir(project.root) / "runs" / paused.data["run_id"] / "scope_snapshot.json"
    snapshot.write_text(snapshot.read_text().replace('"files":{', '"files":{"forged.py":null,'))
    state = paused_state(project, project.resume("proceed"))
    assert any(
        "scope snapshot" in flag and "was missing or altered before this coder round" in flag
        for flag in flag_texts(state)
    )
    assert "forged.py" not in snapshot.read_text()
