"""The machine's tool versions are asked kind by kind, when read
(:mod:`stepkit.plugins.projects.machine`): reading Python's version starts
no other tool (node's start alone is tens of milliseconds, paid before the
first gate of every verify whose project's CI has a matrix).  Each tool on
PATH is a wrapper that records its start, then runs the real one."""

from __future__ import annotations

import shutil

from stepkit.plugins.projects import machine


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
