"""Node: prettier on the changed files when configured; lockfiles only when tracked."""

from __future__ import annotations

import pytest

from stepkit.testing import resolve_gates
from stepkit.workspace.gate_commands import expand_files
from tests.support.detect import detected, need, run_shell
from tests.support.gitrepo import init_repo

NODE = "stepkit.plugins.projects.node"
PRETTIER = '{"devDependencies": {"prettier": "^3"}, "scripts": {"test": "vitest run"}}'


def test_prettier_writes_the_changed_files_when_configured_and_installed(stepkit_project):
    project = stepkit_project(
        {"package.json": PRETTIER, ".prettierrc.json": "{}", "pnpm-lock.yaml": ""}
    )
    assert resolve_gates(project)["format"] == (
        "pnpm exec prettier --write --ignore-unknown {files}",
        NODE,
    )


def test_prettier_declared_without_a_config_is_no_formatter(stepkit_project):
    project = stepkit_project({"package.json": PRETTIER})
    assert resolve_gates(project)["format"] == (None, None)


def test_a_format_script_wins_over_prettier(stepkit_project):
    project = stepkit_project(
        {
            "package.json": PRETTIER.replace('"test"', '"format": "prettier -w src", "test"'),
            ".prettierrc": "",
        }
    )
    assert resolve_gates(project)["format"] == ("npm run format", NODE)


def test_an_untracked_lockfile_does_not_choose_the_package_manager(tmp_path):
    project = init_repo(tmp_path / "repo", {"package.json": PRETTIER})
    (project / "yarn.lock").write_text("")
    assert detected(project)["tests"] == "npm run test"
    tracked = init_repo(tmp_path / "tracked", {"package.json": PRETTIER, "yarn.lock": ""})
    assert detected(tracked)["tests"] == "yarn run test"


def test_a_script_named_for_the_type_check_is_the_build_gate(stepkit_project):
    project = stepkit_project(
        {"package.json": '{"scripts": {"build": "vite build", "lint:types": "tsc -b"}}'}
    )
    assert resolve_gates(project)["build"] == ("npm run lint:types", NODE)


@pytest.mark.slow
def test_the_real_prettier_writes_only_the_changed_file(stepkit_project, tmp_path):
    need("npm")
    ugly = "const a = {b:1}\n"
    project = stepkit_project(
        {
            "package.json": PRETTIER,
            ".prettierrc.json": "{}",
            "changed.js": ugly,
            "other.js": ugly,
            "notes.bin": "\x00",
        }
    )
    installed = run_shell(
        f"npm install --no-audit --no-fund --no-save --cache {tmp_path / 'npm-cache'} prettier@3",
        project,
    )
    if installed.returncode != 0:
        pytest.skip(f"prettier could not be installed here: {installed.stderr.strip()[-200:]}")
    command, _ = expand_files(resolve_gates(project)["format"][0], ["changed.js", "notes.bin"])
    done = run_shell(command, project)
    assert done.returncode == 0, done.stderr
    assert (project / "changed.js").read_text() == "const a = { b: 1 };\n"
    assert (project / "other.js").read_text() == ugly
