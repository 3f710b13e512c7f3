"""A fix round's lint runs on the files that can have changed its verdict,
where the tool's declaration and the project's command allow it
(:mod:`stepkit.workspace.narrowing`); anything else runs the whole command.

The commands are read against the built-in declarations; the runner's
narrowed command is run by the real tools on a real tree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stepkit.config import load_config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.gates import GateRunner
from stepkit.workspace.narrowing import narrowed
from stepkit.workspace.tools import builtin_tools
from tests.support.detect import VENV_BIN

FILES = ["src/a.py", "tests/test_a.py", "README.md"]


def on(command: str, files=FILES, changed=FILES) -> str | None:
    found = narrowed(command, files, changed, builtin_tools())
    return None if found is None else found.command


def test_a_per_file_linter_runs_on_the_files_of_its_kinds():
    assert on("ruff check") == "ruff check --force-exclude src/a.py tests/test_a.py"
    assert on("python -m ruff check --fix") == (
        "python -m ruff check --fix --force-exclude src/a.py tests/test_a.py"
    )
    assert on("ruff check --select=E,F src") == "ruff check --select=E,F --force-exclude src/a.py"
    # a variant the mechanism was not written for: flake8's own declaration
    assert on("flake8 --count .") == "flake8 --count src/a.py tests/test_a.py"


@pytest.mark.parametrize(
    "command",
    [
        "mypy src",  # a type checker reads other files: never narrowed
        "ruff check --config ruff.toml src",  # which word is the option's value?
        "ruff check && mypy .",  # more than one tool
        "ruff check $(git ls-files)",
        "ruff format",  # not an invocation the linter declares
        "make lint",  # a command stepkit does not know
    ],
)
def test_what_it_cannot_read_runs_whole(command):
    assert on(command) is None


def test_a_change_to_a_configuration_file_runs_whole():
    assert on("ruff check", changed=[*FILES, "pyproject.toml"]) is None
    assert on("ruff check", changed=[*FILES, "sub/.ruff.toml"]) is None
    assert on("flake8", changed=[*FILES, ".flake8"]) is None
    # another tool's configuration changes nothing of ruff's
    assert on("ruff check", changed=[*FILES, ".eslintrc.json"]) is not None


def test_no_file_of_its_kinds_runs_whole():
    assert on("ruff check", files=["README.md"]) is None
    assert on("ruff check docs") is None


CLEAN = "import os\n\nprint(os.sep)\n"
UNUSED = "import os\n"


@pytest.mark.parametrize("tool", ["ruff check", "flake8"])
def test_the_runner_runs_the_narrowed_command_for_real(tmp_path, monkeypatch, tool):
    if shutil.which(tool.split()[0], path=str(VENV_BIN)) is None:
        pytest.skip(f"{tool.split()[0]} is not installed in this environment")
    monkeypatch.setenv("PATH", f"{VENV_BIN}:{Path('/usr/bin')}:{Path('/bin')}")
    (tmp_path / "a.py").write_text(CLEAN)
    (tmp_path / "b.py").write_text(UNUSED)  # fails the whole command
    (tmp_path / "stepkit.toml").write_text(f'[commands]\nlint = "{VENV_BIN / tool}"\n')
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    config = load_config(tmp_path)
    pm = get_plugin_manager(tmp_path, config)

    def lint(narrow=None):
        runner = GateRunner(pm, tmp_path, config, tmp_path / "logs", narrow_lint=narrow)
        return runner.run(["lint"])[0]

    whole = lint()
    assert whole.status == "fail" and whole.narrowed_to is None, whole.evidence
    # a tool named by its path is no invocation stepkit knows: whole
    assert lint((["a.py"], ["a.py"])).narrowed_to is None

    (tmp_path / "stepkit.toml").write_text(f'[commands]\nlint = "{tool}"\n')
    config = load_config(tmp_path)
    one = lint((["a.py", "gone.py"], ["a.py"]))
    assert one.status == "pass" and one.narrowed_to == ["a.py"], one.evidence
    assert one.command == tool  # the planned command; the evidence shows what ran
    assert f"$ {tool}" in one.evidence and "a.py" in one.evidence, one.evidence
