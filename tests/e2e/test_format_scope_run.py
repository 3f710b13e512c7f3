"""In a run, the formatter gets the coder's changes and nothing else: a
``{files}`` formatter formats only them, and a whole-tree formatter's edits
elsewhere are undone, kept in the run dir and named (real CLI, command coder)."""

from __future__ import annotations

import json
import shlex

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, PY, make_project, sh

FORMATTER = """import pathlib, sys
paths = [pathlib.Path(p) for p in sys.argv[1:]] or sorted(pathlib.Path(".").rglob("*.py"))
for path in paths:
    text = path.read_text()
    if not text.startswith("# formatted"):
        path.write_text("# formatted\\n" + text)
"""


def project_formatting_with(tmp_path, arguments: str):
    project = make_project(tmp_path)
    formatter = project.state_dir / "fmt.py"
    formatter.write_text(FORMATTER)
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace('format = ""', f'format = "{sh(PY, formatter)}{arguments}"')
    )
    project.git("commit", "-qam", "a formatter")
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"})
    return project


def format_gate(result) -> dict:
    return next(g for g in result.data["gates"] if g["name"] == "format")


@pytest.mark.slow
def test_a_files_formatter_formats_only_what_the_coder_changed(tmp_path):
    project = project_formatting_with(tmp_path, " {files:.py}")
    result = project.run()
    assert result.code == 5, result.stderr
    gate = format_gate(result)
    assert (gate["status"], gate["changed_files"]) == ("pass", ["calc.py"])
    assert (project.root / "calc.py").read_text() == "# formatted\n" + GOOD_MUL
    assert not (project.root / "check.py").read_text().startswith("# formatted")
    assert project.git("diff", "--name-only", "--", ".", ":!plans") == "calc.py\n"


@pytest.mark.slow
def test_a_whole_tree_formatters_edits_outside_the_coders_changes_are_undone_and_kept(tmp_path):
    project = project_formatting_with(tmp_path, "")
    (project.root / "wip.py").write_text("mine = 1\n")  # the user's, untracked, before the step
    result = project.run()
    assert result.code == 5, result.stderr
    gate = format_gate(result)
    assert gate["changed_files"] == ["calc.py", "check.py", "lint.py", "wip.py"]
    assert "restored 3 file(s)" in gate["summary"] and "check.py" in gate["summary"]
    assert (
        project.root / "wip.py"
    ).read_text() == "mine = 1\n"  # git holds no copy: held before the gate
    assert project.git("diff", "--name-only", "--", ".", ":!plans") == "calc.py\n"
    run_dir = store_dir(project.root) / "runs" / result.data["run_id"]
    kept = run_dir / "displaced" / "format-1" / "check.py"
    assert kept.read_text().startswith("# formatted")
    assert kept.relative_to(project.root).as_posix() in gate["evidence"]
    state = json.loads((run_dir / "state.json").read_text())
    command = state["settings"]["gate_plan"]["commands"]["format"]["command"]
    assert shlex.split(command)[-1].endswith("fmt.py")


def test_a_committed_lockfile_the_tests_gate_rewrites_is_restored_in_a_run(tmp_path):
    project = make_project(tmp_path)
    (project.root / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    config = project.root / "stepkit.toml"
    rewrite = f"{PY} -c \\\"open('package-lock.json', 'w').write('{{}}')\\\" && {PY} check.py"
    config.write_text(config.read_text().replace(f'test = "{PY} check.py"', f'test = "{rewrite}"'))
    project.git("add", "-A")
    project.git("commit", "-qm", "a lockfile")
    result = project.run()
    assert result.code == 5, result.stderr
    tests = next(g for g in result.data["gates"] if g["name"] == "tests")
    assert tests["status"] == "pass" and "package-lock.json" in tests["summary"]
    assert (project.root / "package-lock.json").read_text() == '{"lockfileVersion": 3}\n'
    assert project.git("diff", "--name-only", "package-lock.json") == ""
