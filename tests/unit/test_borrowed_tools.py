"""The tools a stepkit work tree borrows from the user's tree, and the work
tree's source that must shadow what a borrowed virtualenv imports from the
user's tree: the ``.pth`` line (tests/e2e/test_worktree_runs.py runs it)
and setuptools' ``__editable__`` finder, here in the format it writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from stepkit.config import Config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.borrowed import shadowing_sources
from stepkit.workspace.toolpath import tool_dirs, tool_env
from stepkit.workspace.worktree_record import WorktreeRecord, write_record
from tests.support.gitrepo import git, init_repo

FINDER = """from __future__ import annotations
import sys

MAPPING: dict[str, str] = {{'calc': '{calc}', 'calc.extra': '{extra}', 'renamed': '{calc}'}}
NAMESPACES: dict[str, list[str]] = {{}}
"""


def venv(root: Path) -> Path:
    """A virtualenv at ``root/.venv``; its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    return next((root / ".venv" / "lib").glob("python*/site-packages"))


def stepkit_worktree(tmp_path: Path) -> tuple[Path, Path]:
    """(the user's tree, a recorded stepkit work tree of it), both with src/calc/."""
    origin, tree = tmp_path / "origin", tmp_path / "tree"
    (origin / "src" / "calc").mkdir(parents=True)
    (origin / "src" / "calc" / "__init__.py").write_text("")
    (origin / ".gitignore").write_text(".venv/\n")
    init_repo(origin)
    git(origin, "worktree", "add", "-q", "-b", "stepkit/01-a", str(tree))
    write_record(
        tree,
        WorktreeRecord(
            path=str(tree),
            project=str(tree),
            origin=str(origin),
            origin_top=str(origin),
            branch="stepkit/01-a",
            base="HEAD",
            step=1,
            plans="plans",
        ),
    )
    return origin, tree


def test_an_editable_finder_is_shadowed_by_the_worktrees_source(tmp_path):
    origin, tree = stepkit_worktree(tmp_path)
    site = venv(origin)
    calc = origin / "src" / "calc"
    (site / "__editable___calc_0_1_finder.py").write_text(
        FINDER.format(calc=calc, extra=origin / "other")
    )
    pm = get_plugin_manager(tree, Config())
    dirs = tool_dirs(pm, tree)
    assert dirs == [str(origin / ".venv" / "bin")]  # borrowed: the work tree has no .venv
    env = tool_env(tree, dirs, base={"PATH": "/usr/bin", "PYTHONPATH": "/mine"})
    assert env["PATH"].split(os.pathsep)[0] == str(origin / ".venv" / "bin")
    # only the top-level name mapped to a directory of that name: its parent, in the work tree
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tree / "src"), "/mine"]
    done = subprocess.run(
        ["python", "-c", "import calc; print(calc.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == str(tree / "src" / "calc" / "__init__.py")


def test_the_worktrees_own_venv_is_not_replaced_by_the_users(tmp_path):
    origin, tree = stepkit_worktree(tmp_path)
    venv(origin)
    venv(tree)
    assert tool_dirs(get_plugin_manager(tree, Config()), tree) == [".venv/bin"]
    assert shadowing_sources(origin, tree, [".venv/bin"]) == []


def test_the_users_tree_borrows_nothing(tmp_path):
    origin, _ = stepkit_worktree(tmp_path)
    venv(origin)
    dirs = tool_dirs(get_plugin_manager(origin, Config()), origin)
    assert dirs == [".venv/bin"]
    assert "PYTHONPATH" not in tool_env(origin, dirs, base={"PATH": "/usr/bin"})
