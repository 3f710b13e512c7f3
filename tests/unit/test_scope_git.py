"""The one git module: every git process stepkit starts is spawned by
``stepkit.workspace.scope.git``."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

from stepkit.cli.demo import prepare_demo_project
from stepkit.workspace.scope import git
from stepkit.workspace.scope.snapshot import head_snapshot

ROOT = Path(__file__).resolve().parents[2]
GIT_MODULE = ROOT / "stepkit" / "workspace" / "scope" / "git.py"


def git_calls(path: Path) -> list[int]:
    """Lines of ``path`` with a call naming the git executable: an argv
    starting with "git" (``subprocess.run(["git", ...])``) or ``shutil.which("git")``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        first = node.args[0]
        if isinstance(first, (ast.List, ast.Tuple)) and first.elts:
            first = first.elts[0]
        if isinstance(first, ast.Constant) and first.value == "git":
            lines.append(node.lineno)
    return lines


def test_only_the_git_module_runs_git():
    sources = [*(ROOT / "stepkit").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]
    assert git_calls(GIT_MODULE)  # the scan sees the module's own calls
    offenders = {str(p.relative_to(ROOT)): git_calls(p) for p in sources if p != GIT_MODULE}
    assert {p: lines for p, lines in offenders.items() if lines} == {}


def test_the_demo_project_is_one_clean_commit(tmp_path):
    project = prepare_demo_project(tmp_path)
    log = subprocess.run(
        ["git", "log", "--format=%an <%ae> %s"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert log == "stepkit demo <demo@stepkit.invalid> textkit before step 1\n"
    assert git.status(project, "")[1] == {}


def test_status_names_project_paths_with_their_ids_in_head(tmp_path):
    project = tmp_path / "repo" / "sub"
    project.mkdir(parents=True)
    (project / "kept.txt").write_text("kept\n")
    (project / "changed.txt").write_text("old\n")
    git.commit_all(tmp_path / "repo", "start", name="t", email="t@t")
    root, prefix = git.location(project)
    (project / "changed.txt").write_text("new\n")
    (project / "added.txt").write_text("added\n")
    (tmp_path / "repo" / "outside.txt").write_text("not the project's\n")
    head, paths = git.status(Path(root), prefix)
    assert prefix == "sub/" and head == git.head(Path(root))
    assert paths == {
        "changed.txt": git.commit_ids(Path(root), head, prefix)["changed.txt"],
        "added.txt": None,
    }
    assert git.blob(Path(root), paths["changed.txt"]) == b"old\n"


def test_outside_git_the_readers_answer_nothing(tmp_path):
    assert git.location(tmp_path) is None
    assert git.index_ids(tmp_path) is None
    assert git.head(tmp_path) is None


def _counted_git(tmp_path: Path, monkeypatch) -> Path:
    """``git`` on PATH as a wrapper that records each start; the file it writes."""
    started = tmp_path / "git-starts"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho git >> "{started}"\nexec {shutil.which("git")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:/usr/bin:/bin")
    return started


def test_a_head_snapshot_asks_git_once_where_the_tree_is_and_its_head(tmp_path, monkeypatch):
    # asked before the first gate of every verify (the formatter's change set)
    project = tmp_path / "repo" / "sub"
    project.mkdir(parents=True)
    (project / "a.txt").write_text("a\n")
    git.commit_all(tmp_path / "repo", "start", name="t", email="t@t")
    started = _counted_git(tmp_path, monkeypatch)
    snap = head_snapshot(project)
    assert started.read_text().split() == ["git"]
    assert (snap.git_root, snap.prefix) == git.location(project)
    assert snap.head == git.head(project) and snap.head is not None


def test_a_head_snapshot_before_the_first_commit_and_outside_git(tmp_path):
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    subprocess.run(["git", "init", "-q", str(unborn)], check=True)
    snap = head_snapshot(unborn)
    assert (snap.mode, snap.git_root, snap.prefix, snap.head) == ("git", str(unborn), "", None)
    outside = tmp_path / "outside"
    outside.mkdir()
    assert head_snapshot(outside) is None
