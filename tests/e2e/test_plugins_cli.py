"""``stepkit plugins``: every plugin with origin, version and hooks; load errors."""

from __future__ import annotations

import importlib.metadata
import json
import sys

import pytest

from stepkit.cli import main

STEPCONF = """\
from stepkit import hookimpl

@hookimpl
def stepkit_test_command(project_dir, config):
    return "./run-tests"
"""


def plugins_json(capsys, project, *extra):
    assert main(["plugins", "--project-dir", str(project), "--json", *extra]) == 0
    return {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}


def test_json_lists_builtins_with_origin_version_and_hooks(tmp_path, capsys):
    plugins = plugins_json(capsys, tmp_path)
    pytest_parser = plugins["stepkit.plugins.evidence.pytest"]
    assert pytest_parser["origin"] == "builtin"
    assert pytest_parser["version"]
    assert pytest_parser["hooks"] == ["stepkit_condense_output"]
    assert "stepkit_gate_command" in plugins["stepkit.plugins.overrides"]["hooks"]


def test_stepconf_is_listed_with_its_path(tmp_path, capsys):
    (tmp_path / "stepconf.py").write_text(STEPCONF)
    plugins = plugins_json(capsys, tmp_path)
    assert plugins["stepconf"]["origin"] == str(tmp_path / "stepconf.py")
    assert plugins["stepconf"]["hooks"] == ["stepkit_test_command"]


def test_a_configured_module_has_the_version_of_the_distribution_providing_it(tmp_path, capsys):
    (tmp_path / "stepkit.toml").write_text(
        'plugins = ["yaml"]\n'
    )  # module yaml, distribution PyYAML
    plugins = plugins_json(capsys, tmp_path)
    assert plugins["yaml"]["origin"] == "[tool.stepkit] plugins"
    assert plugins["yaml"]["version"] == importlib.metadata.version("PyYAML")


def test_a_disabled_plugin_is_not_listed(tmp_path, capsys):
    plugins = plugins_json(capsys, tmp_path, "-p", "no:generic")
    assert "stepkit.plugins.evidence.generic" not in plugins
    assert "stepkit.plugins.evidence.pytest" in plugins


def test_table_output(tmp_path, capsys):
    assert main(["plugins", "--project-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "ORIGIN", "VERSION", "HOOKS"]
    row = next(line for line in lines if line.startswith("stepkit.plugins.evidence.pytest "))
    assert row.split()[1:] == ["builtin", row.split()[2], "condense_output"]


@pytest.fixture
def broken_entry_point(tmp_path, monkeypatch):
    """An installed distribution whose ``stepkit`` entry point cannot be imported."""
    site = tmp_path / "site"
    dist = site / "brokenplug-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[stepkit]\nbrokenplug = brokenplug_missing_module_6e2\n"
    )
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    return "brokenplug"


def test_load_errors_are_shown(tmp_path, capsys, broken_entry_point):
    project = tmp_path / "project"
    project.mkdir()
    plugins = plugins_json(capsys, project)
    assert plugins[broken_entry_point]["origin"] == "failed to load"
    assert "No module named 'brokenplug_missing_module_6e2'" in plugins[broken_entry_point]["error"]
    assert main(["plugins", "--project-dir", str(project)]) == 0
    row = next(
        line for line in capsys.readouterr().out.splitlines() if line.startswith(broken_entry_point)
    )
    assert (
        "FAILED TO LOAD: ModuleNotFoundError: No module named 'brokenplug_missing_module_6e2'"
        in row
    )


def test_a_bad_project_dir_is_a_usage_error(tmp_path, capsys):
    assert main(["plugins", "--project-dir", str(tmp_path / "nope")]) == 2
    assert "is not a directory" in capsys.readouterr().err


MY_PRESET = """\
from stepkit import hookimpl

@hookimpl
def stepkit_coder_presets():
    return [{"name": "mycli", "path": None, "version": None, "checked": ["1.0"], "checked_version": False,
             "install": "pipx install mycli"}]
"""


def test_the_presets_come_from_the_plugins_built_ins_first(tmp_path, capsys):
    """stepkit_coder_presets: a project's preset is listed after the
    built-ins', and switching the built-in command coder off drops its presets."""
    (tmp_path / "stepconf.py").write_text(MY_PRESET)

    def presets(*extra):
        assert main(["plugins", "--project-dir", str(tmp_path), "--json", *extra]) == 0
        return [p["name"] for p in json.loads(capsys.readouterr().out)["presets"]]

    assert presets() == ["claude", "codex", "aider", "opencode", "mycli"]
    assert presets("-p", "no:command") == ["mycli"]
    assert main(["plugins", "--project-dir", str(tmp_path)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["mycli", "not", "on", "PATH", "(install:", "pipx", "install", "mycli)", "1.0"] in rows


OBSERVER = """\
import sys

import stepkit


class Tally:
    nodes = 0

    @stepkit.hookimpl
    def stepkit_node_finished(self, node):
        self.nodes += 1

    def close(self):
        print(f"tally: {self.nodes} nodes", file=sys.stderr)


@stepkit.hookimpl
def stepkit_run_observers(command):
    return [Tally()] if command == "run" else []
"""


@pytest.mark.slow
def test_a_run_is_shown_by_the_observers_the_plugins_give(tmp_path):
    """stepkit_run_observers: the project's observer sees the run and is
    closed at its end, after the built-in progress display; -p no:display
    leaves only it; --json asks for none."""
    from tests.support.e2e import make_project

    project = make_project(tmp_path)
    (project.root / "stepconf.py").write_text(OBSERVER)
    project.stepkit(
        "trust", "--project-dir", str(project.root), json_out=False
    )  # no first-use note
    shown = project.run(json_out=False)
    lines = shown.stderr.splitlines()
    assert shown.code == 5 and "✓ orient" in lines[0]
    assert lines[-1].startswith("tally: ") and int(lines[-1].split()[1]) > 5
    quiet = project.run("-p", "no:display", "--rerun", json_out=False)
    assert quiet.code == 5, quiet.stderr
    assert [line for line in quiet.stderr.splitlines() if "✓ orient" in line] == []
    assert quiet.stderr.splitlines()[-1].startswith("tally: ")
    assert "tally" not in project.run("--rerun").stderr
