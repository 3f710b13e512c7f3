"""This machine's paths out of text that is committed (stepkit.workspace.localpaths)."""

from __future__ import annotations

from stepkit.workspace.localpaths import portable_text
from stepkit.workspace.store import store_dir
from tests.support.gitrepo import git


def test_a_project_reached_through_a_symlink_is_made_relative_by_either_name(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    text = f"{real}/calc.py and {tmp_path / 'link'}/calc.py"
    assert portable_text(text, tmp_path / "link") == "calc.py and calc.py"


def test_only_whole_path_components_are_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "p"
    project.mkdir()
    text = f"{project}2/x {project}.d/y {project}-old cd {project}. {tmp_path}/home/bin"
    assert portable_text(text, project) == (f"{project}2/x {project}.d/y {project}-old cd .. ~/bin")


def test_the_run_store_of_a_git_project_is_named_not_spelled(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    git(project, "init", "-q")
    log = store_dir(project) / "runs" / "r1" / "logs" / "tests-1.log"
    assert (
        portable_text(f"full log: {log}", project)
        == "full log: <run store>/runs/r1/logs/tests-1.log"
    )
