"""The gates on real projects with the real tools of this machine: commands
chosen by the project plugins, run by the gate runner, condensed by the
evidence parsers."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from stepkit.config import load_config
from stepkit.pluginmanager import DEFAULT_PLUGINS, get_plugin_manager
from stepkit.workspace.gates import run_gates
from stepkit.workspace.store import store_dir
from tests.support.detect import VENV_BIN
from tests.support.gitrepo import git, write_files

GATE_PLUGINS = [
    m for m in DEFAULT_PLUGINS if ".projects." in m or ".evidence." in m or m.endswith(".overrides")
]


def verify(project: Path, gates=("format", "lint", "build", "tests")):
    config = load_config(project)
    pm = get_plugin_manager(project, config, builtins=GATE_PLUGINS)
    return {
        r.name: r for r in run_gates(pm, project, config, store_dir(project) / "logs", gates=gates)
    }


@pytest.fixture
def venv_path(monkeypatch):
    if not (VENV_BIN / "ruff").exists():
        pytest.skip(f"needs ruff and pytest in {VENV_BIN}")
    monkeypatch.setenv("PATH", f"{VENV_BIN}:{os.environ['PATH']}")


PYPROJECT = """\
[project]
name = "calc"
version = "0.1.0"

[tool.ruff]
line-length = 100

[tool.ruff.format]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""


def test_python_project_passing(tmp_path, venv_path):
    project = write_files(
        tmp_path,
        {
            "pyproject.toml": PYPROJECT,
            "calc.py": "def add(a,b):\n    return a+b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        },
    )
    # the formatter takes the work tree's changes against HEAD: calc.py is the new file
    git(project, "init", "-q")
    git(project, "add", "pyproject.toml", "tests")
    git(project, "commit", "-qm", "base")
    results = verify(project)
    assert {name: r.status for name, r in results.items()} == {
        "format": "pass",
        "lint": "pass",
        "build": "not_run",
        "tests": "pass",
    }
    assert results["format"].command.startswith("ruff format")
    # format ran first and rewrote the file; the other gates saw the formatted bytes
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert results["tests"].summary == "1 passed"
    assert "This is NOT evidence that build passed." in results["build"].evidence


def test_python_project_failing(tmp_path, venv_path):
    project = write_files(
        tmp_path,
        {
            "pyproject.toml": PYPROJECT,
            "calc.py": "import os\n\n\ndef add(a, b):\n    return a - b\n",
            "tests/test_calc.py": (
                "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
                "def test_zero():\n    assert add(0, 0) == 0\n"
            ),
        },
    )
    results = verify(project, gates=("lint", "tests"))
    lint, tests = results["lint"], results["tests"]
    assert (lint.status, lint.exit_code) == ("fail", 1)
    assert "calc.py:1:8: F401" in lint.evidence
    assert (tests.status, tests.exit_code) == ("fail", 1)
    assert "FAILED tests/test_calc.py::test_add" in tests.evidence
    assert "assert -1 == 3" in tests.evidence
    assert tests.summary == "1 failed, 1 passed"


def _npm_project(root: Path, test_script: str) -> Path:
    scripts = {"test": test_script, "lint": "node -e \"console.log('lint ok')\""}
    package = {"name": "demo", "version": "1.0.0", "private": True, "scripts": scripts}
    return write_files(root, {"package.json": json.dumps(package)})


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")
def test_node_project_with_npm_scripts(tmp_path, monkeypatch):
    monkeypatch.setenv("NPM_CONFIG_UPDATE_NOTIFIER", "false")
    good = _npm_project(tmp_path / "good", "node -e \"console.log('Tests: 3 passed, 3 total')\"")
    bad = _npm_project(
        tmp_path / "bad", "node -e \"console.error('boom: 1 test failed'); process.exit(1)\""
    )
    results = verify(good, gates=("lint", "tests"))
    assert results["lint"].command == "npm run lint"
    assert [r.status for r in results.values()] == ["pass", "pass"]
    assert "Tests: 3 passed, 3 total" in results["tests"].evidence
    failed = verify(bad, gates=("tests",))["tests"]
    assert (failed.status, failed.exit_code) == ("fail", 1)
    assert "boom: 1 test failed" in failed.evidence


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")
def test_rust_crate_with_cargo(tmp_path, monkeypatch):
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path / "target"))
    monkeypatch.setenv("CARGO_NET_OFFLINE", "true")
    monkeypatch.setenv("CARGO_INCREMENTAL", "0")
    project = write_files(
        tmp_path / "crate",
        {
            "Cargo.toml": '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
            "src/lib.rs": (
                "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n"
                "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
                "    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n"
                "    #[test]\n    fn wrong() {\n        assert_eq!(add(2, 2), 5);\n    }\n}\n"
            ),
        },
    )
    results = verify(project, gates=("build", "tests"))
    assert results["build"].command.startswith("cargo build")
    assert results["build"].status == "pass"
    tests = results["tests"]
    assert (tests.status, tests.exit_code) == ("fail", 101)
    assert "tests::wrong" in tests.evidence
    assert "panicked at src/lib.rs" in tests.evidence
    assert tests.summary == "1 failed, 1 passed"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_makefile_project(tmp_path):
    project = write_files(
        tmp_path,
        {
            "Makefile": "lint:\n\t@echo lint clean\n\ntest:\n\t@echo running 2 checks\n\t@test -f ready.txt\n"
            "\t@echo 2 passed in 0.01s\n",
        },
    )
    results = verify(project)
    assert results["lint"].command == "make lint" and results["lint"].status == "pass"
    assert results["format"].status == "not_run" and results["build"].status == "not_run"
    tests = results["tests"]
    assert (tests.command, tests.status, tests.exit_code) == ("make test", "fail", 2)
    assert "running 2 checks" in tests.evidence
    (project / "ready.txt").write_text("yes\n")
    assert verify(project, gates=("tests",))["tests"].status == "pass"
