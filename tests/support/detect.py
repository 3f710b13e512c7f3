"""Helpers for the detection tests: the real ``stepkit detect`` and the real tools."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import stepkit

#: A CTest project whose tests sit behind an option that is off: ctest finds no test.
CMAKE_TESTS_BEHIND_AN_OPTION = """\
cmake_minimum_required(VERSION 3.10)
project(demo C)
include(CTest)
option(ENABLE_TESTS "build the tests" OFF)
add_executable(demo main.c)
if(ENABLE_TESTS)
  add_test(NAME runs COMMAND demo)
endif()
"""

#: The venv's own scripts (ruff, black, mypy, uv …), which PATH may not list.
VENV_BIN = Path(sys.executable).parent


def detect_json(project: Path) -> dict[str, Any]:
    """``stepkit detect --json`` run as a process on ``project``."""
    done = stepkit("detect", "--json", "--project-dir", str(project), check=True)
    return json.loads(done.stdout)


def detected(project: Path) -> dict[str, str | None]:
    """Each gate's command as ``stepkit detect --json`` reports it."""
    return {gate["name"]: gate["command"] for gate in detect_json(project)["gates"]}


def tool_env() -> dict[str, str]:
    """The environment a real command runs in: the venv's scripts on PATH."""
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def need(name: str) -> str:
    """The path of tool ``name`` (the venv's first); skips the test when it is absent."""
    found = shutil.which(name, path=tool_env()["PATH"])
    if found is None:
        pytest.skip(f"needs {name}")
    return found


def run_shell(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run a detected command as the gate runner would: through the shell, in ``cwd``."""
    return subprocess.run(
        command,
        shell=True,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**tool_env(), **env},
    )
