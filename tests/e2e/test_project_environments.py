"""A tool the project's environment lacks is an environment fault naming
it, never the tool on PATH: the gates run a Python tool as a module of the
environment's interpreter (``uv run --frozen python -m ruff``), with a real
uv, a real uv.lock and a real ruff and mypy on PATH beside it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import stepkit
from tests.support.detect import need, tool_env
from tests.support.gitrepo import init_repo

#: A uv project whose environment holds nothing but the interpreter.
UV_PROJECT = (
    '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
    "dependencies = []\n\n[tool.uv]\npackage = false\n"
)


def verify(project: Path, uv_cache: Path) -> dict:
    """``stepkit verify --json`` as a process, the venv's ruff and mypy on PATH."""
    done = stepkit(
        "verify",
        "--json",
        "--project-dir",
        str(project),
        env={**tool_env(), "UV_CACHE_DIR": str(uv_cache), "UV_OFFLINE": "1"},
    )
    return json.loads(done.stdout)


def uv_project(tmp_path: Path, tool_config: str, gates: str, files: dict[str, str]) -> Path:
    """A committed uv project (its lock made by the real uv) using a tool it does not declare."""
    uv = need("uv")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(UV_PROJECT + tool_config)
    cache = {"UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_OFFLINE": "1"}
    done = subprocess.run([uv, "lock"], cwd=project, env={**tool_env(), **cache}, check=False)
    assert done.returncode == 0
    return init_repo(
        project,
        {
            "pyproject.toml": UV_PROJECT + tool_config,
            "uv.lock": (project / "uv.lock").read_text(),
            "stepkit.toml": f"[commands]\n{gates}",
            **files,
        },
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tool", "config", "gates", "gate"),
    [
        ("ruff", "\n[tool.ruff]\nline-length = 100\n", 'format = ""\nbuild = ""\ntest = ""\n', 1),
        # the variant: the type check, which the same rule covers
        ("mypy", "\n[tool.mypy]\nstrict = true\n", 'format = ""\nlint = ""\ntest = ""\n', 2),
    ],
)
def test_a_tool_the_uv_environment_lacks_is_an_environment_fault_naming_it(
    tmp_path, tool, config, gates, gate
):
    need(tool)  # on PATH, where `uv run TOOL` would silently find it
    project = uv_project(tmp_path, config, gates, {"demo.py": "def f() -> int:\n    return 1\n"})
    result = verify(project, tmp_path / "uv-cache")["gates"][gate]
    assert result["command"].startswith(f"uv run --frozen python -m {tool} ")
    assert result["status"] == "error", result
    assert f"{tool} is not installed in the project's environment" in result["summary"]
