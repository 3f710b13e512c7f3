"""A virtualenv inside the project is known by its ``pyvenv.cfg``, whatever
its name: untracked and not ignored, its files are never the step's files
(listing, snapshot, changes, the files a formatter is given), and its
``bin`` is one of the project's tool directories."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stepkit.plugins.projects.tool_dirs import stepkit_tool_dirs
from stepkit.workspace.scope import file_ids, take_snapshot
from stepkit.workspace.scope.diff import snapshot_changes, working_tree_files
from stepkit.workspace.scope.tree import EXCLUDED_DIRS, walk_files
from tests.support.gitrepo import init_repo


def make_venv(path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)


# ".env" is what pluggy's Development docs make; the others are names no code spells
@pytest.mark.parametrize("name", [".env", "py-tools", "envs/dev"])
def test_an_untracked_virtualenv_of_any_name_is_not_the_projects_files(tmp_path, name):
    project = init_repo(tmp_path / "p", {"a.py": "a = 1\n"})
    make_venv(project / name)
    assert all(not rel.startswith(name + "/") for rel in file_ids(project))
    before = take_snapshot(project)
    assert all(not rel.startswith(name + "/") for rel in before.files)
    site = next((project / name / "lib").glob("python*/site-packages"))
    (site / "planted.py").write_text("x = 1\n")  # a pip install the tests ran
    (project / "a.py").write_text("a = 2\n")
    assert [rel for rel, _old, _new in snapshot_changes(before, project)] == ["a.py"]
    assert working_tree_files(project, project / "plans") == ["a.py"]


def test_a_virtualenv_is_not_walked_outside_git(tmp_path):
    (tmp_path / "a.py").write_text("a = 1\n")
    make_venv(tmp_path / "toolbox")
    assert walk_files(tmp_path, EXCLUDED_DIRS) == ["a.py"]
    assert file_ids(tmp_path).keys() == {"a.py"}


def test_a_virtualenv_of_any_name_is_a_tool_directory(tmp_path):
    make_venv(tmp_path / ".env")
    (tmp_path / "other" / "bin").mkdir(parents=True)  # no pyvenv.cfg: not one
    assert stepkit_tool_dirs(project_dir=tmp_path) == [".env/bin"]


@pytest.mark.parametrize("git", [True, False], ids=["git", "no-git"])
def test_a_pyvenv_cfg_hides_only_a_virtualenvs_own_layout(tmp_path, git):
    """Only what a virtualenv is made of (``bin``, ``lib``, ``pyvenv.cfg`` …)
    is the environment: a ``pyvenv.cfg`` cannot hide a package that shadows
    a module (``calc/__init__.py`` over ``calc.py``) from the step's changes."""
    files = {"calc.py": "def add(a, b):\n    return a + b\n"}
    if git:
        project = init_repo(tmp_path / "p", files)
    else:
        project = tmp_path / "p"
        project.mkdir()
        (project / "calc.py").write_text(files["calc.py"])
    before = take_snapshot(project)
    (project / "calc").mkdir()
    (project / "calc" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (project / "calc" / "__init__.py").write_text("def add(a, b):\n    return 4\n")
    changed = [rel for rel, _old, _new in snapshot_changes(before, project)]
    assert changed == ["calc/__init__.py"]
    assert "calc/__init__.py" in file_ids(project)
    make_venv(project / "calc")  # a real one: its bin, lib and include stay out
    assert [rel for rel, _old, _new in snapshot_changes(before, project)] == changed
