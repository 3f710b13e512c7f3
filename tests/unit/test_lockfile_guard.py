"""No gate changes a tracked lockfile: one it rewrites is restored, the
gate's version kept and named in its evidence (``stepkit verify`` on real
git repos)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit.api import verify
from stepkit.workspace.store import store_dir
from tests.support.gitrepo import git, init_repo

PY = sys.executable
LOCK = 'version = 1\nrequires-python = ">=3.8"\n'


def repo(tmp_path: Path, lint: str, files: dict[str, str]) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    for rel, text in files.items():
        (project / rel).write_text(text)
    (project / "stepkit.toml").write_text(
        f'[commands]\nformat = ""\nlint = {json.dumps(lint)}\nbuild = ""\ntest = ""\n'
    )
    init_repo(project)
    return project


def lint_gate(project: Path) -> dict:
    return next(g for g in verify(project)["gates"] if g["name"] == "lint")


def test_a_committed_lockfile_a_gate_rewrites_is_restored_and_recorded(tmp_path):
    rewrite = f"{PY} -c \"open('uv.lock', 'a').write('rewritten = true\\\\n')\""
    project = repo(tmp_path, rewrite, {"uv.lock": LOCK, "app.py": "x = 1\n"})
    gate = lint_gate(project)
    assert gate["status"] == "pass"
    assert (project / "uv.lock").read_text() == LOCK
    assert git(project, "status", "--porcelain") == ""
    (kept,) = (store_dir(project) / "verify").glob("*/displaced/lint-1/uv.lock")
    assert kept.read_text() == LOCK + "rewritten = true\n"
    assert "uv.lock" in gate["summary"]
    assert kept.relative_to(project).as_posix() in gate["evidence"]
    assert gate["changed_files"] == ["uv.lock"]


def test_an_untracked_lockfile_is_the_gates_business(tmp_path):
    create = f"{PY} -c \"open('poetry.lock', 'w').write('x')\""
    project = repo(tmp_path, create, {"app.py": "x = 1\n"})
    gate = lint_gate(project)
    assert (project / "poetry.lock").read_text() == "x"
    assert gate["changed_files"] == ["poetry.lock"] and "restored" not in gate["summary"]


def test_real_uv_rewriting_a_committed_uv_lock_is_undone(tmp_path):
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        pytest.skip("uv is not installed")
    pyproject = (
        '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.8"\ndependencies = []\n'
    )
    project = tmp_path / "lockme"
    project.mkdir()
    (project / "pyproject.toml").write_text(pyproject)
    subprocess.run([uv, "lock", "--offline"], cwd=project, check=True, capture_output=True)
    locked = (project / "uv.lock").read_text()
    project = repo(
        tmp_path,
        f"{uv} run --offline --no-project python -c pass && {uv} lock --offline",
        {"pyproject.toml": pyproject.replace("0.1.0", "0.2.0"), "uv.lock": locked},
    )
    gate = lint_gate(project)
    assert gate["status"] == "pass", gate["evidence"]
    assert (project / "uv.lock").read_text() == locked
    assert "uv.lock" in gate["evidence"]
