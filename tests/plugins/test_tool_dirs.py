"""The built-in ``stepkit_tool_dirs``: which directories of a project hold its own tools."""

from __future__ import annotations

from stepkit.plugins.projects.tool_dirs import stepkit_tool_dirs


def test_the_built_in_tool_dirs_are_a_virtualenv_node_bins_and_a_task_runners_bin(tmp_path):
    assert stepkit_tool_dirs(project_dir=tmp_path) == []
    (tmp_path / "venv" / "bin").mkdir(parents=True)  # no pyvenv.cfg: not a virtualenv
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "node_modules" / ".bin").mkdir(parents=True)
    (tmp_path / "bin").mkdir()
    assert stepkit_tool_dirs(project_dir=tmp_path) == [".venv/bin", "node_modules/.bin"]
    (tmp_path / "Makefile").write_text("test:\n\t./bin/run-tests\n")
    assert stepkit_tool_dirs(project_dir=tmp_path) == [".venv/bin", "node_modules/.bin", "bin"]
