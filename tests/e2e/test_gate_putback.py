"""Every gate, not only the formatter, puts back the tracked files its
command rewrote that the step did not change: the version it left is kept
under ``displaced/<gate>-<n>/`` and named in the gate's summary and
evidence (a test script that runs a whole-tree rewrite, then the real
check, through the real CLI in ``stepkit verify`` and ``stepkit run``)."""

from __future__ import annotations

import json

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, PY, make_project, sh

#: rewrites every tracked .py file's trailing whitespace, as a whole-tree
#: formatter inside a project's test script does
REWRITE = """import pathlib, subprocess
for rel in subprocess.run(["git", "ls-files", "*.py"], capture_output=True, text=True).stdout.split():
    path = pathlib.Path(rel)
    path.write_text(path.read_text() + "\\n\\n")
"""


def project_whose_tests_rewrite_the_tree(tmp_path):
    project = make_project(tmp_path)
    rewrite = project.state_dir / "rewrite.py"
    rewrite.write_text(REWRITE)
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(
            f'test = "{PY} check.py"', f'test = "{sh(PY, rewrite)} && {PY} check.py"'
        )
    )
    project.git("commit", "-qam", "tests that rewrite the tree")
    return project


def the_tests_gate(data: dict) -> dict:
    return next(g for g in data["gates"] if g["name"] == "tests")


def modified_py(project) -> list[str]:
    """The modified tracked .py files (the plan repo is stepkit's to update)."""
    return sorted(
        line[3:]
        for line in project.git("status", "--porcelain").splitlines()
        if line[:2].strip() == "M" and line.endswith(".py")
    )


def test_stepkit_verify_puts_back_what_the_tests_gate_rewrote(tmp_path):
    project = project_whose_tests_rewrite_the_tree(tmp_path)
    (project.root / "calc.py").write_text(GOOD_MUL)
    project.git("commit", "-qam", "mul")
    result = project.stepkit("verify")
    gate = the_tests_gate(result.data)
    assert gate["status"] == "pass", gate["evidence"]
    assert modified_py(project) == []
    kept = sorted((store_dir(project.root) / "verify").glob("*/displaced/tests-1/*.py"))
    assert [p.name for p in kept] == ["calc.py", "check.py", "lint.py"]
    for path in kept:
        assert path.read_text().endswith("\n\n\n")
        assert path.relative_to(project.root).as_posix() in gate["evidence"]
    assert "restored 3 tracked file(s)" in gate["summary"] and "check.py" in gate["summary"]
    assert gate["changed_files"] == ["calc.py", "check.py", "lint.py"]


@pytest.mark.slow
def test_a_run_puts_back_what_the_tests_gate_rewrote_but_not_the_steps_own_files(tmp_path):
    project = project_whose_tests_rewrite_the_tree(tmp_path)
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"})
    result = project.run()
    assert result.code == 5, result.stderr
    gate = the_tests_gate(result.data)
    assert gate["status"] == "pass", gate["evidence"]
    # calc.py is the step's own: the gate's rewrite of it stays, the others go back
    assert modified_py(project) == ["calc.py"]
    assert (project.root / "calc.py").read_text() == GOOD_MUL + "\n\n"
    run_dir = store_dir(project.root) / "runs" / result.data["run_id"]
    kept = sorted(p.name for p in (run_dir / "displaced").glob("tests-*/*.py"))
    assert kept == ["check.py", "lint.py"]
    for name in kept:
        assert f"displaced/tests-1/{name}" in gate["evidence"]
    assert "calc.py" not in gate["summary"] and "lint.py" in gate["summary"]
    state = json.loads((run_dir / "state.json").read_text())
    assert state["status"] != "running"


def test_a_lint_gate_too_and_only_files_git_holds_as_they_were(tmp_path):
    """The variant: the lint gate rewrites the tree.  A file the user had
    changed (the change set) and one git does not track stay as it left them."""
    project = make_project(tmp_path)
    rewrite = project.state_dir / "rewrite.py"
    rewrite.write_text(REWRITE + "pathlib.Path('notes.py').write_text('rewritten\\n')\n")
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(f'lint = "{PY} lint.py"', f'lint = "{sh(PY, rewrite)}"')
    )
    project.git("commit", "-qam", "a lint that rewrites the tree")
    (project.root / "calc.py").write_text(GOOD_MUL)  # the change being verified
    (project.root / "notes.py").write_text("mine\n")  # untracked
    result = project.stepkit("verify")
    lint = next(g for g in result.data["gates"] if g["name"] == "lint")
    assert modified_py(project) == ["calc.py"]
    assert (project.root / "calc.py").read_text() == GOOD_MUL + "\n\n"
    assert (project.root / "notes.py").read_text() == "rewritten\n"
    assert "restored 2 tracked file(s)" in lint["summary"], lint["summary"]
    assert "displaced/lint-1/check.py" in lint["evidence"]


def test_a_failing_tests_gate_judged_against_its_baseline_is_put_back_after_its_re_runs(tmp_path):
    project = project_whose_tests_rewrite_the_tree(tmp_path)
    (project.root / "calc.py").write_text(GOOD_MUL.replace("a * b", "a + b"))  # a new failure
    result = project.stepkit("verify", "--baseline", "HEAD")
    gate = the_tests_gate(result.data)
    assert gate["status"] == "fail"
    assert modified_py(project) == ["calc.py"]
    assert "check.py" in gate["summary"]
