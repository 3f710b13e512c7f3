"""``stepkit undo``: after a failed step, the tree is as it was when the step
started (the user's own uncommitted work included), and the coder's change
is kept under the run as a patch that ``git apply`` puts back."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.e2e import CALC, WRONG_MUL, make_project


@pytest.fixture
def failed(tmp_path):
    project = make_project(tmp_path)  # committed
    # the user's own uncommitted work, there before the step started
    (project.root / "scratch.txt").write_text("the user's notes\n")
    (project.root / "check.py").write_text((project.root / "check.py").read_text() + "# mine\n")
    project.coder_actions(
        {
            "write": {
                "calc.py": WRONG_MUL,
                "helper.py": "X = 1\n",
                "scratch.txt": "overwritten\n",
            },
            "delete": ["lint.py"],
            "sentinel": "CODER_COMPLETE",
        }
    )
    result = project.run("--set", "max_fix_attempts=0")
    assert result.outcome == "STEP_FAILED", result.stderr
    return project, result.data["run_id"]


@pytest.mark.slow
def test_undo_puts_the_tree_back_and_keeps_the_change_as_a_patch(failed):
    project, run_id = failed
    check_before = (project.root / "check.py").read_text()
    done = project.stepkit("undo", json_out=False)
    assert done.code == 0, done.stderr
    assert (project.root / "calc.py").read_text() == CALC
    assert not (project.root / "helper.py").exists()
    assert (project.root / "lint.py").is_file()
    assert (project.root / "scratch.txt").read_text() == "the user's notes\n"
    assert (project.root / "check.py").read_text() == check_before  # not the step's change
    assert f"Run {run_id} (step 1)" in done.stdout
    patch_line = next(line for line in done.stdout.splitlines() if "git apply" in line)
    patch = patch_line.split("git apply ", 1)[1].strip()

    applied = subprocess.run(
        ["git", "apply", patch], cwd=project.root, capture_output=True, text=True, check=False
    )
    assert applied.returncode == 0, applied.stderr
    assert (project.root / "calc.py").read_text() == WRONG_MUL
    assert (project.root / "helper.py").read_text() == "X = 1\n"
    assert not (project.root / "lint.py").exists()
    assert (project.root / "scratch.txt").read_text() == "overwritten\n"


@pytest.mark.slow
def test_a_second_undo_has_nothing_to_do_and_keeps_the_first_patch(failed):
    project, run_id = failed
    assert project.stepkit("undo", run_id, json_out=False).code == 0
    again = project.stepkit("undo", run_id, json_out=False)
    assert again.code == 0 and "Nothing to undo" in again.stdout
    assert (project.root / "calc.py").read_text() == CALC


@pytest.mark.slow
def test_undo_after_the_coder_committed_changes_nothing_and_says_how(failed):
    project, run_id = failed
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "coder's commit")
    done = project.stepkit("undo", run_id, json_out=False)
    assert done.code == 2 and "git reset --soft" in done.stderr
    assert (project.root / "calc.py").read_text() == WRONG_MUL


@pytest.mark.slow
def test_undo_of_a_run_that_waits_for_an_answer_is_refused(tmp_path):
    project = make_project(tmp_path)
    project.coder_actions({"write": {"calc.py": CALC + "\n\ndef mul(a, b):\n    return a * b\n"}})
    paused = project.run()
    assert paused.outcome == "PAUSED", paused.stderr
    done = project.stepkit("undo", json_out=False)
    assert done.code == 2 and "--answer reject" in done.stderr
    assert "def mul" in (project.root / "calc.py").read_text()


@pytest.mark.slow
def test_step_failed_ends_with_the_commands_that_fit_its_reason_and_they_work(failed, tmp_path):
    project, run_id = failed
    output = (project.root / ".git" / "stepkit").rglob("output.txt")
    text = next(p for p in output if run_id in str(p)).read_text()
    next_lines = text.split("\nNext:\n", 1)[1].splitlines()
    assert next_lines[0].strip().startswith(f"stepkit undo {run_id}")
    assert "stepkit run --step 1 --set max_fix_attempts=2" in next_lines[1]
    undo = next_lines[0].split("#")[0].split()
    done = project.stepkit(*undo[1:], json_out=False)
    assert done.code == 0 and (project.root / "calc.py").read_text() == CALC


def test_an_environment_fault_says_to_fix_the_machine_not_to_undo(tmp_path):
    project = make_project(tmp_path)
    config = project.root / "stepkit.toml"
    config.write_text(config.read_text().replace('build = "', 'build = "no-such-tool-xyz '))
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "a missing tool")
    result = project.run()
    assert result.outcome == "STEP_FAILED", result.stderr
    assert "Next:\n  fix what the reason above names" in result.output
    assert "stepkit undo" not in result.output
