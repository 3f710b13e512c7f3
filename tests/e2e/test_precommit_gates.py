"""The format and lint gates run the project's pre-commit hooks, so the
tool's version and arguments are the pinned ones: detection on real
projects' configs, and real pre-commit (installed from the package index
into a tmp venv) running a hook pinned to another ruff than PATH's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import stepkit
from tests.support.detect import VENV_BIN, detect_json, run_shell, tool_env
from tests.support.gitrepo import init_repo

REAL = Path(__file__).parents[1] / "fixtures" / "precommit_real"


def copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(REAL / name, tmp_path / name))


def gates(project: Path) -> dict[str, tuple[str | None, str | None]]:
    found = detect_json(project)
    return {gate["name"]: (gate["command"], gate["source"]) for gate in found["gates"]}


def test_remote_ruff_hooks_are_the_format_and_lint_gates(tmp_path):
    """pypa/installer: its ruff is the one ruff-pre-commit pins, not PATH's."""
    found = gates(copy("installer", tmp_path))
    assert found["format"] == (
        "pre-commit run ruff-format --files {files}",
        ".pre-commit-config.yaml:22",
    )
    assert found["lint"] == ("pre-commit run ruff-check --all-files", ".pre-commit-config.yaml:21")


def test_a_lint_hook_that_fixes_is_passed_over_with_a_note(tmp_path):
    """pytest-dev/pluggy: `ruff-check` with `--fix` would rewrite files in a lint gate."""
    project = copy("pluggy", tmp_path)
    found = detect_json(project)
    commands = {gate["name"]: gate["command"] for gate in found["gates"]}
    assert commands["format"] == "pre-commit run ruff-format --files {files}"
    assert commands["lint"] == "ruff check"
    assert any("passed over the pre-commit hook `ruff-check`" in n for n in found["notes"])


def test_pre_commit_declared_in_the_uv_environment_runs_from_it(tmp_path):
    project = copy("installer", tmp_path)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[dependency-groups]\ndev = ["pre-commit"]\n')
    (project / "uv.lock").write_text("version = 1\n")
    assert gates(project)["lint"][0] == (
        "uv run --frozen python -m pre_commit run ruff-check --all-files"
    )


def test_pre_commit_missing_is_an_environment_fault_naming_it(tmp_path):
    if shutil.which("pre-commit", path=f"{VENV_BIN}{os.pathsep}/usr/bin:/bin"):
        pytest.skip("pre-commit is installed here")
    project = init_repo(
        tmp_path / "proj",
        {
            ".pre-commit-config.yaml": (REAL / "installer" / ".pre-commit-config.yaml").read_text(),
            "pyproject.toml": '[project]\nname = "demo"\n',
            "stepkit.toml": '[commands]\nformat = ""\nbuild = ""\ntest = ""\n',
        },
    )
    lint = verify(project, {"PATH": f"{VENV_BIN}{os.pathsep}/usr/bin:/bin"})["gates"][1]
    assert (lint["command"], lint["status"]) == ("pre-commit run ruff-check --all-files", "error")
    assert "pre-commit" in lint["summary"]


def verify(project: Path, env: dict[str, str]) -> dict:
    done = stepkit(
        "verify", "--json", "--project-dir", str(project), env={**tool_env(), **env}, timeout=600
    )
    return json.loads(done.stdout)


#: ruff-pre-commit's own hook definitions (its .pre-commit-hooks.yaml), as local hooks pinned
#: to the ruff the package index has (remote hooks are cloned from GitHub), with the arguments a
#: project passes: the lint selects a rule the project's own config does not.
PINNED_HOOKS = """\
repos:
  - repo: local
    hooks:
      - id: ruff-check
        name: ruff check
        entry: ruff check --force-exclude
        language: python
        types_or: [python, pyi, jupyter]
        require_serial: true
        additional_dependencies: ["ruff==0.16.9"]
        args: [--select, T201]
      - id: ruff-format
        name: ruff format
        entry: ruff format --force-exclude
        language: python
        types_or: [python, pyi, jupyter]
        require_serial: true
        additional_dependencies: ["ruff==0.16.9"]
"""


@pytest.fixture(scope="module")
def pre_commit_bin(tmp_path_factory) -> Path:
    """A venv with the real pre-commit from the package index; its bin directory."""
    venv = tmp_path_factory.mktemp("pre-commit-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pre-commit"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"pre-commit could not be installed: {done.stderr[-300:]}")
    return venv / "bin"


@pytest.mark.slow
def test_real_pre_commit_runs_the_pinned_hook_and_checks_without_rewriting(
    tmp_path, pre_commit_bin
):
    ugly = "print( 'x' )\n"
    project = init_repo(
        tmp_path / "proj",
        {
            ".pre-commit-config.yaml": PINNED_HOOKS,
            "pyproject.toml": '[project]\nname = "demo"\n[tool.ruff]\nline-length = 100\n',
            "stepkit.toml": '[commands]\nbuild = ""\ntest = ""\n',
            "demo.py": "x = 1\n",
        },
    )
    (project / "demo.py").write_text(ugly)  # the change verify judges
    env = {
        "PATH": f"{pre_commit_bin}{os.pathsep}{tool_env()['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
    }
    assert run_shell("ruff check demo.py", project).returncode == 0
    result = verify(project, env)
    format_, lint = result["gates"][0], result["gates"][1]
    # the pinned arguments: PATH's `ruff check` passes this file, the project's hook does not
    assert lint["command"] == "pre-commit run ruff-check --all-files"
    assert lint["status"] == "fail", lint
    assert "T201" in lint["evidence"]
    # the formatter hook as a check: it names the file and leaves its bytes as they were
    assert format_["status"] == "fail", format_
    assert "would reformat" in format_["evidence"] and "demo.py" in format_["evidence"]
    assert (project / "demo.py").read_text() == ugly


@pytest.mark.slow
def test_real_pre_commit_that_cannot_fetch_a_hook_repository_is_an_environment_fault(
    tmp_path, pre_commit_bin
):
    """pre-commit's own set-up failure (exit 3, no hook ran) is the machine, not a lint verdict."""
    project = init_repo(
        tmp_path / "proj",
        {
            ".pre-commit-config.yaml": (
                f"repos:\n  - repo: file://{tmp_path / 'no-such-repo'}\n    rev: v1\n"
                "    hooks:\n      - id: flake8\n"
            ),
            "pyproject.toml": '[project]\nname = "demo"\n',
            "stepkit.toml": '[commands]\nformat = ""\nbuild = ""\ntest = ""\n',
            "demo.py": "x = 1\n",
        },
    )
    env = {
        "PATH": f"{pre_commit_bin}{os.pathsep}{tool_env()['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
    }
    lint = verify(project, env)["gates"][1]
    assert (lint["command"], lint["status"]) == ("pre-commit run flake8 --all-files", "error"), lint
    assert lint["summary"].startswith("pre-commit: cannot set up its hooks ("), lint
