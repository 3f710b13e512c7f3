"""Which plugin entries are the project's own (their file found without
importing anything), and the trust store's record, copy and diff."""

from __future__ import annotations

import json

import pytest

from stepkit.errors import PluginError
from stepkit.trust import LocalPlugin, TrustStore, check_trusted, local_plugin_file, state_home


def test_a_module_of_the_project_is_local_and_an_installed_one_is_not(tmp_path, monkeypatch):
    (tmp_path / "myplug").mkdir()
    (tmp_path / "myplug" / "__init__.py").write_text("raise SystemExit('imported')\n")
    (tmp_path / "myplug" / "sub.py").write_text("")
    (tmp_path / "single.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert (
        local_plugin_file(tmp_path, "myplug.sub") == tmp_path / "myplug" / "sub.py"
    )  # __init__ never ran
    assert local_plugin_file(tmp_path, "myplug") == tmp_path / "myplug" / "__init__.py"
    assert local_plugin_file(tmp_path, "single") == tmp_path / "single.py"
    assert local_plugin_file(tmp_path, "plugins/extra.py") == tmp_path / "plugins" / "extra.py"
    assert local_plugin_file(tmp_path, "yaml") is None
    assert local_plugin_file(tmp_path, "no_such_module_xyz") is None


def test_the_store_lives_outside_the_project_and_keeps_the_trusted_bytes(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    plugin = LocalPlugin("stepconf", project / "stepconf.py")
    plugin.path.write_text("a = 1\n")
    check_trusted(project, [plugin])  # first use
    store = TrustStore(project)
    assert store.root.is_relative_to(state_home() / "stepkit" / "trust")
    assert json.loads(store.index.read_text())["project"] == str(project.resolve())
    assert store.trusted_bytes(plugin.path) == b"a = 1\n"

    plugin.path.write_text("a = 2\n")
    with pytest.raises(
        PluginError, match=r"local plugin stepconf.py changed since it was trusted: not loaded"
    ):
        check_trusted(project, [plugin])
    assert "-a = 1\n+a = 2\n" in store.diff(plugin.path)
    store.record([plugin])
    check_trusted(project, [plugin])
