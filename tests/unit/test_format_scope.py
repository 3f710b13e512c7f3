"""Formatters touch only the change set: ``{files}`` is the step's changed
files, and whatever a formatter changes outside them is restored, its
version kept and named (``stepkit verify --fix`` on real git repos)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from stepkit.api import verify
from stepkit.workspace.store import store_dir
from tests.support.gitrepo import git, init_repo

PY = sys.executable
#: a formatter that marks every file it is given (every .py under the
#: current directory when given none) as formatted
FORMATTER = """import pathlib, sys
paths = [pathlib.Path(p) for p in sys.argv[1:]] or sorted(pathlib.Path(".").rglob("*.py"))
for path in paths:
    text = path.read_text()
    if not text.startswith("# formatted"):
        path.write_text("# formatted\\n" + text)
"""


@pytest.fixture
def formatter(tmp_path) -> Path:
    path = tmp_path / "fmt.py"
    path.write_text(FORMATTER)
    return path


def repo(tmp_path: Path, format_command: str) -> Path:
    """A committed project: two Python modules and a README, only a format command."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text("a = 1\n")
    (project / "b.py").write_text("b = 1\n")
    (project / "README.md").write_text("readme\n")
    (project / "stepkit.toml").write_text(
        f'[commands]\nformat = {json.dumps(format_command)}\nlint = ""\nbuild = ""\ntest = ""\n'
    )
    init_repo(project)
    return project


def format_gate(project: Path) -> dict:
    return next(g for g in verify(project, fix=True)["gates"] if g["name"] == "format")


def test_files_is_the_working_trees_changes_against_head(tmp_path, formatter):
    project = repo(tmp_path, f"{PY} {shlex.quote(str(formatter))} {{files:.py}}")
    (project / "a.py").write_text("a = 2\n")
    (project / "new.py").write_text("n = 1\n")
    (project / "notes.txt").write_text("not python\n")
    gate = format_gate(project)
    assert gate["status"] == "pass"
    assert (project / "a.py").read_text() == "# formatted\na = 2\n"
    assert (project / "new.py").read_text().startswith("# formatted")
    assert (project / "b.py").read_text() == "b = 1\n"  # not changed: not given to the formatter
    assert (
        gate["command"] == f"{PY} {shlex.quote(str(formatter))} {{files:.py}}"
    )  # as detect prints it
    assert gate["changed_files"] == ["a.py", "new.py"]


def test_a_deleted_file_is_not_given_to_the_formatter(tmp_path, formatter):
    project = repo(tmp_path, f"{PY} {shlex.quote(str(formatter))} {{files}}")
    (project / "b.py").unlink()
    (project / "a.py").write_text("a = 2\n")
    gate = format_gate(project)
    assert gate["status"] == "pass", gate["evidence"]
    assert not (project / "b.py").exists()


def test_an_empty_change_set_runs_no_formatter(tmp_path, formatter):
    project = repo(tmp_path, f"{PY} {shlex.quote(str(formatter))} {{files:.py}}")
    (project / "README.md").write_text("changed, but not python\n")
    gate = format_gate(project)
    assert (gate["status"], gate["exit_code"], gate["changed_files"]) == ("not_run", None, [])
    assert gate["summary"] == "nothing to format: no changed .py file"
    assert (project / "a.py").read_text() == "a = 1\n"


def test_a_whole_tree_formatters_edits_outside_the_change_set_are_restored_kept_and_named(
    tmp_path, formatter
):
    project = repo(tmp_path, f"{PY} {shlex.quote(str(formatter))}")
    (project / "a.py").write_text("a = 2\n")
    gate = format_gate(project)
    assert (project / "a.py").read_text() == "# formatted\na = 2\n"  # in the change set: kept
    assert (project / "b.py").read_text() == "b = 1\n"  # outside it: restored
    assert git(project, "status", "--porcelain") == " M a.py\n"
    (kept,) = (store_dir(project) / "verify").glob("*/displaced/format-1/b.py")
    assert kept.read_text() == "# formatted\nb = 1\n"
    assert gate["changed_files"] == ["a.py", "b.py"]
    assert "b.py" in gate["summary"] and "restored" in gate["summary"]
    assert kept.relative_to(project).as_posix() in gate["evidence"]


def test_a_real_ruff_formats_only_the_changed_file(tmp_path):
    ruff = pytest.importorskip("ruff")
    binary = Path(ruff.find_ruff_bin())
    project = repo(tmp_path, f"{binary} format {{files:.py,.pyi}}")
    (project / "b.py").write_text("b=1\n")
    git(project, "commit", "-qam", "unformatted b")
    (project / "a.py").write_text("a=2\n")
    gate = format_gate(project)
    assert gate["status"] == "pass", gate["evidence"]
    assert (project / "a.py").read_text() == "a = 2\n"
    assert (project / "b.py").read_text() == "b=1\n"


def test_files_are_shell_quoted_filtered_and_never_read_as_options():
    from stepkit.workspace.gate_commands import expand_files

    files = ["a b.py", "-x.py", "c.pyi", "d.md"]
    assert expand_files("fmt {files:.py, .pyi}", files) == ("fmt ./-x.py 'a b.py' c.pyi", "")
    assert expand_files("fmt {files}", files) == ("fmt ./-x.py 'a b.py' c.pyi d.md", "")
    # one placeholder left empty would hand its tool no file, and most then format everything
    assert expand_files("ruff format {files:.py} && prettier -w {files:.js,.ts}", files) == (
        None,
        "nothing to format: no changed .js or .ts file",
    )
    assert expand_files("fmt {files}", []) == (None, "nothing to format: no changed file")


def test_verify_shows_the_formatter_running_on_its_files_and_what_it_changed(
    tmp_path, formatter, capsys
):
    from stepkit.cli import main

    project = repo(tmp_path, f"{PY} {shlex.quote(str(formatter))} {{files:.py}}")
    (project / "a.py").write_text("a = 2\n")
    # 1: the project has no tests command, and a tests gate NOT RUN is no pass
    assert main(["verify", "--fix", "--project-dir", str(project)]) == 1
    out = capsys.readouterr().out
    assert f"[format] running: {PY} {shlex.quote(str(formatter))} a.py\n" in out
    assert "    changed by this gate: a.py\n" in out


def test_outside_git_a_files_formatter_is_not_run_for_want_of_a_change_set(tmp_path, formatter):
    project = tmp_path / "plain"
    project.mkdir()
    (project / "a.py").write_text("a = 1\n")
    (project / "stepkit.toml").write_text(
        f"[commands]\nformat = {json.dumps(f'{PY} {shlex.quote(str(formatter))} {{files}}')}\n"
    )
    gate = format_gate(project)
    assert gate["status"] == "not_run" and "change set is unknown" in gate["summary"]
    assert (project / "a.py").read_text() == "a = 1\n"
