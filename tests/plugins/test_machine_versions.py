"""The machine's tool versions are asked kind by kind, when read
(:mod:`stepkit.plugins.projects.machine`): reading Python's version starts
no other tool (node's start alone is tens of milliseconds, paid before the
first gate of every verify whose project's CI has a matrix).  Each tool on
PATH is a wrapper that records its start, then runs the real one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from stepkit.plugins.projects import interpreters, machine
from stepkit.workspace.scope import startup


def test_reading_one_kind_starts_only_its_tool(tmp_path, monkeypatch):
    started = tmp_path / "started"
    for tool in ("python3", "node", "go"):
        real = shutil.which(tool)
        wrapper = tmp_path / tool
        run = f'exec {real} "$@"' if real else "exit 127"
        wrapper.write_text(f'#!/bin/sh\necho {tool} >> "{started}"\n{run}\n')
        wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")

    python = machine.version("python")

    assert started.read_text().split() == ["python3"]
    assert python == machine.version("python")  # asked once per PATH
    assert started.read_text().split() == ["python3"]
    machine.version("node")
    assert started.read_text().split() == ["python3", "node"]


def _recorded_python3(tmp_path, monkeypatch):
    """``python3`` on PATH as a wrapper that records each start; the file it writes."""
    started = tmp_path / "started"
    wrapper = tmp_path / "python3"
    wrapper.write_text(
        f'#!/bin/sh\necho python3 >> "{started}"\nexec {shutil.which("python3")} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    return started


def test_a_command_that_runs_no_tox_or_nox_asks_no_interpreter_version(tmp_path, monkeypatch):
    # narrowing a plain command is asked of every Python project's tests gate before it starts
    started = _recorded_python3(tmp_path, monkeypatch)
    for command in ("python -m pytest -rfE", "pytest -x && ruff check", "make test"):
        assert interpreters.narrow(command, tmp_path, "tests") == (command, "")
    assert not started.exists()


def test_a_tox_command_still_asks_the_interpreter_version(tmp_path, monkeypatch):
    started = _recorded_python3(tmp_path, monkeypatch)
    (tmp_path / "tox.ini").write_text("[tox]\nenv_list = py27, py3\n")
    narrowed = interpreters.narrow("tox", tmp_path, "tests")
    assert started.read_text().split() == ["python3"]
    assert narrowed == ("tox -e py3", "")  # py27 left out: this machine's Python is another


def _says(python) -> str:
    """What ``python --version`` says its version is (as CI readers once asked it)."""
    said = subprocess.run([python, "--version"], capture_output=True, text=True, check=True)
    return (said.stdout + said.stderr).split()[-1]


def test_the_python3_a_run_asks_for_its_site_directories_answers_its_version(tmp_path, monkeypatch):
    # a run asks the Pythons on PATH as it begins (a pyenv shim takes ~100 ms to
    # start one); its CI reader's question is that same start's answer
    started = _recorded_python3(tmp_path, monkeypatch)
    startup.ask_ahead(())
    version = machine.version("python")
    assert started.read_text().split() == ["python3"]
    assert version == _says(tmp_path / "python3")


def test_without_python3_the_python_on_path_answers(tmp_path, monkeypatch):
    started = tmp_path / "started"
    wrapper = tmp_path / "python"
    binary = os.path.realpath(sys.executable)  # runs without PATH
    wrapper.write_text(f'#!/bin/sh\necho python >> "{started}"\nexec {binary} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    version = machine.version("python")
    assert started.read_text().split() == ["python"]
    assert version == _says(wrapper)
