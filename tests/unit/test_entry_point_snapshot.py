"""A run loads only the stepkit entry points installed when it began
(stepkit/pluginmanager.py): one that appears later, at a resume, is refused
and named in the load errors.  A real dist-info on sys.path."""

from __future__ import annotations

import sys

from stepkit.pluginmanager import entry_point_ids, get_plugin_manager

LATE = "import stepkit\n\n\n@stepkit.hookimpl\ndef stepkit_test_command(project_dir, config):\n    return 'true'\n"


def test_an_entry_point_installed_after_the_run_began_is_not_loaded(tmp_path, monkeypatch):
    began = entry_point_ids()
    info = tmp_path / "late-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: late\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[stepkit]\nlate = late_plugin\n")
    (tmp_path / "late_plugin.py").write_text(LATE)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.delitem(sys.modules, "late_plugin", raising=False)
    assert "late=late_plugin (late 1.0)" in entry_point_ids()

    resumed = get_plugin_manager(entry_points=set(began))
    assert resumed.get_plugin("late") is None
    assert "appeared after the run began" in resumed.load_errors["late"]
    assert get_plugin_manager().get_plugin("late") is not None  # a new run loads it
