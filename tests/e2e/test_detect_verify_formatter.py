"""Through the real ``stepkit verify`` and the real ruff and black: a
lint-only ``[tool.ruff]`` project is not reformatted; verify checks a
project's formatting and rewrites nothing, and ``verify --fix`` formats only
the changed file."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.cli import stepkit
from tests.support.detect import need, tool_env
from tests.support.gitrepo import init_repo

UGLY = "x = {  'a':1 }\n"


def verify(project, *args):
    done = stepkit("verify", "--json", "--project-dir", str(project), *args, env=tool_env())
    return done.returncode, {gate["name"]: gate for gate in json.loads(done.stdout)["gates"]}


def test_a_lint_only_ruff_project_is_not_reformatted(tmp_path):
    need("ruff")
    project = init_repo(
        tmp_path / "repo",
        {"pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff]\n', "old.py": UGLY},
    )
    (project / "new.py").write_text(UGLY)
    code, gates = verify(project)
    assert code == 1 and gates["tests"]["status"] == "not_run"  # no tests command: no pass
    assert (gates["format"]["command"], gates["format"]["status"]) == (None, "not_run")
    assert gates["lint"]["command"] == "ruff check"
    assert (project / "old.py").read_text() == UGLY and (project / "new.py").read_text() == UGLY


@pytest.mark.parametrize(
    "tool, config, check",
    [
        ("ruff", "[tool.ruff.format]\n", "ruff format --check --force-exclude"),
        ("black", "[tool.black]\n", "black --check"),
    ],
)
def test_verify_checks_the_formatting_of_the_changed_files_and_rewrites_nothing(
    tmp_path, tool, config, check
):
    need(tool)
    project = init_repo(
        tmp_path / "repo",
        {"pyproject.toml": f'[project]\nname = "demo"\n\n{config}', "old.py": UGLY},
    )
    (project / "new.py").write_text(UGLY)
    code, gates = verify(project)
    assert code == 1 and gates["format"]["status"] == "fail"
    assert check in gates["format"]["evidence"] and "new.py" in gates["format"]["evidence"]
    assert "old.py" not in gates["format"]["evidence"]
    assert (project / "new.py").read_text() == UGLY and (project / "old.py").read_text() == UGLY
    assert gates["format"]["changed_files"] == []


def test_verify_fix_formats_only_the_changed_file(tmp_path):
    need("ruff")
    project = init_repo(
        tmp_path / "repo",
        {"pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff.format]\n', "old.py": UGLY},
    )
    (project / "new.py").write_text(UGLY)
    code, gates = verify(project, "--fix")
    assert code == 1 and gates["tests"]["status"] == "not_run"  # no tests command: no pass
    assert gates["format"]["status"] == "pass"
    assert gates["format"]["changed_files"] == ["new.py"]
    assert (project / "new.py").read_text() == 'x = {"a": 1}\n'
    assert (project / "old.py").read_text() == UGLY  # committed, untouched by the step


def test_verify_all_files_checks_a_clean_checkout_as_ci_does(tmp_path):
    """On a clean checkout verify's formatter has no change to check; with
    ``--all-files`` it checks every file of the project, as CI's format job
    (``pre-commit run --all-files``) does, and still rewrites nothing."""
    need("ruff")
    project = init_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff.format]\n',
            ".gitignore": "scratch.py\n",
            "pkg/old.py": UGLY,
            "tidy.py": 'x = {"a": 1}\n',
        },
    )
    (project / "scratch.py").write_text(UGLY)  # ignored: not the project's
    _, gates = verify(project)
    assert gates["format"]["status"] == "not_run"
    code, gates = verify(project, "--all-files")
    assert code == 1 and gates["format"]["status"] == "fail"
    evidence = gates["format"]["evidence"]
    assert "pkg/old.py" in evidence and "tidy.py" in evidence and "scratch.py" not in evidence
    assert (project / "pkg/old.py").read_text() == UGLY


def test_verify_all_files_fix_formats_the_tracked_files_only(tmp_path):
    need("ruff")
    project = init_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff.format]\n',
            ".gitignore": "scratch.py\n",
            "old.py": UGLY,
        },
    )
    (project / "scratch.py").write_text(UGLY)
    (project / "build").mkdir()
    (project / "build/gen.py").write_text(UGLY)  # untracked output: not the project's yet
    (project / "staged.py").write_text(UGLY)
    subprocess.run(["git", "add", "staged.py"], cwd=project, check=True)
    _, gates = verify(project, "--all-files", "--fix")
    assert gates["format"]["status"] == "pass"
    assert gates["format"]["changed_files"] == ["old.py", "staged.py"]
    assert (project / "old.py").read_text() == 'x = {"a": 1}\n'
    assert (project / "scratch.py").read_text() == UGLY
    assert (project / "build/gen.py").read_text() == UGLY
