"""Lockfile names read from the tool modules' source, as importing them gives them."""

from __future__ import annotations

import os

from stepkit.declsource import declared_values
from stepkit.workspace.tools import builtin_tools, lockfile_names

TOOL = 'from x import Tool\n\nTOOLS = (\n    Tool(name="{name}"{more}),\n)\n'


def test_the_built_in_tools_lockfiles_read_from_source_are_those_they_declare(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert set(lockfile_names()) == set(builtin_tools().lockfiles)
    assert {"uv.lock", "Cargo.lock", "package-lock.json"} <= set(lockfile_names())


def test_an_edited_module_is_read_again_and_one_that_does_not_tell_is_none(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "a.py").write_text(TOOL.format(name="a", more=', lockfiles=("a.lock",)'))
    (tmp_path / "b.py").write_text(TOOL.format(name="b", more=""))
    (tmp_path / "_private.py").write_text("TOOLS = computed()\n")
    assert declared_values(tmp_path, "TOOLS", "lockfiles") == ["a.lock"]
    (tmp_path / "b.py").write_text(TOOL.format(name="b", more=', lockfiles=("b1.lock", "b2.lock")'))
    os.utime(tmp_path / "b.py", ns=(1, 1))  # a new key even within the clock's resolution
    assert declared_values(tmp_path, "TOOLS", "lockfiles") == ["a.lock", "b1.lock", "b2.lock"]
    (tmp_path / "c.py").write_text(TOOL.format(name="c", more=", lockfiles=NAMES"))
    assert declared_values(tmp_path, "TOOLS", "lockfiles") is None
    (tmp_path / "c.py").write_text(TOOL.format(name="c", more=", **more"))
    assert declared_values(tmp_path, "TOOLS", "lockfiles") is None
