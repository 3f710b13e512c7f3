"""A ``--worktree`` run prepares the dependencies its gates need, as the
user's tree has them: a real Node project whose build gate is ``tsc
--noEmit`` from its own ``node_modules`` (typescript installed from the npm
registry into the user's tree; skipped when the registry is unreachable).

Without ``[worktree] setup`` the user's ``node_modules`` is linked in; with
it, the project's own install command runs in the work tree; a setup that
fails (or a tree with nothing to link) is an environment fault: the gates
are ``error``, no fix attempt is spent, the run ends STEP_FAILED naming the
``[worktree] setup`` fix.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_worktree_runs import git
from tests.support.e2e import make_project
from tests.support.gitrepo import commit_all

pytestmark = pytest.mark.slow

BUILD = "npx --no -- tsc --noEmit"
TSCONFIG = '{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["*.ts"]}\n'


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A package dir with typescript installed from the registry (and its lockfile)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    where = tmp_path_factory.mktemp("ts-install")
    (where / "package.json").write_text('{"name": "calc", "version": "1.0.0", "private": true}\n')
    done = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--save-dev", "typescript"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"the npm registry is unreachable: {done.stderr.strip()[-300:]}")
    return where


def node_project(tmp_path: Path, installed: Path, sub: str = "", toml: str = ""):
    """make_project's repo with a Node package (at ``sub``) whose build gate
    is tsc; its node_modules installed in the user's tree, ignored by git."""
    project = make_project(tmp_path)
    package = project.root / sub
    package.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(installed / name, package / name)
    shutil.copytree(installed / "node_modules", package / "node_modules", symlinks=True)
    (package / "tsconfig.json").write_text(TSCONFIG)
    (package / "calc.ts").write_text("export const one: number = 1;\n")
    (project.root / ".gitignore").write_text("__pycache__/\nnode_modules/\n")
    config = (project.root / "stepkit.toml").read_text()
    build = f"cd {sub} && {BUILD}" if sub else BUILD
    config = "\n".join(
        f"build = {json.dumps(build)}" if line.startswith("build =") else line
        for line in config.splitlines()
    )
    (project.root / "stepkit.toml").write_text(config + "\n" + toml)
    commit_all(project.root, "a typescript package")
    return project


def gate(data: dict, name: str) -> dict:
    return next(g for g in data["gates"] if g["name"] == name)


def test_a_worktree_run_builds_with_the_users_node_modules(tmp_path, installed):
    project = node_project(tmp_path, installed)
    users = sorted(p.name for p in (project.root / "node_modules").iterdir())

    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr + paused.stdout
    build = gate(paused.data, "build")
    assert build["status"] == "pass", build
    assert "PRE-EXISTING" not in json.dumps(paused.data)

    done = project.resume("approve")
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
    # the links are not the step's: the commit holds none, the user's packages are all still there
    changed = git(project.root, "diff", "--name-only", "HEAD", "stepkit/01-mul").split()
    assert not [p for p in changed if p.startswith("node_modules")], changed
    assert done.data["worktree_removed"] is True
    assert sorted(p.name for p in (project.root / "node_modules").iterdir()) == users
    assert (project.root / "node_modules" / ".bin" / "tsc").exists()


def test_a_failing_setup_is_an_environment_fault_and_spends_no_fix_attempt(tmp_path, installed):
    project = node_project(
        tmp_path, installed, toml='[worktree]\nsetup = "echo no lockfile >&2; false"\n'
    )

    failed = project.run("--worktree")
    assert failed.outcome == "STEP_FAILED", failed.stderr + failed.stdout
    reason = next(line for line in failed.output.splitlines() if line.startswith("Reason: "))
    assert reason.startswith("Reason: Environment fault: "), reason
    assert "[worktree] setup `echo no lockfile >&2; false` exited 1" in reason
    assert "[worktree] setup = " in reason
    ran = [g for g in failed.data["gates"] if g.get("command")]
    assert ran and all(g["status"] == "error" for g in ran), ran
    assert all("no lockfile" in g["evidence"] for g in ran)
    assert failed.data["fix_attempts"] == 0, failed.data
    # the work tree is kept for a look, without the user's node_modules linked in
    assert not (Path(failed.data["worktree"]) / "node_modules").exists()


def test_a_setup_command_installs_in_the_worktree_from_the_lockfile(tmp_path, installed):
    project = node_project(
        tmp_path, installed, toml='[worktree]\nsetup = "npm ci --no-audit --no-fund"\n'
    )
    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr + paused.stdout
    assert gate(paused.data, "build")["status"] == "pass"
    modules = Path(paused.data["worktree"]) / "node_modules"
    assert modules.is_dir() and not (modules / "typescript").is_symlink()  # installed, not linked


@pytest.mark.xfail(
    strict=True,
    reason="the node plugin names only the project dir's own node_modules, not a subfolder package's",
)
def test_a_subfolder_package_links_its_own_node_modules(tmp_path, installed):
    project = node_project(tmp_path, installed, sub="web")
    paused = project.run("--worktree")
    assert paused.code == 5, paused.stderr + paused.stdout
    assert gate(paused.data, "build")["status"] == "pass"
