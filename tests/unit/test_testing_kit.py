"""stepkit.testing: the project fixture, the plugin-manager factory, gate resolution."""

import pluggy
import pytest

import stepkit
from stepkit.testing import resolve_gate_command, resolve_gates

pytest_plugins = ["stepkit.testing"]


class ShellTests:
    """A plugin as a plugin author writes one."""

    @stepkit.hookimpl
    def stepkit_test_command(self, project_dir):
        return "./tests.sh" if (project_dir / "tests.sh").is_file() else None


def test_project_fixture_writes_text_and_bytes_in_fresh_dirs(stepkit_project):
    first = stepkit_project({"a/b/c.txt": "hello", "bin.dat": b"\x00\x01"})
    second = stepkit_project({}, name="named")
    assert (first / "a/b/c.txt").read_text() == "hello"
    assert (first / "bin.dat").read_bytes() == b"\x00\x01"
    assert second.name == "named" and second != first and second.is_dir()


def test_resolve_gate_command_with_an_extra_plugin(stepkit_project):
    project = stepkit_project({"tests.sh": "#!/bin/sh\n", "Makefile": "test:\n\ttrue\n"})
    assert resolve_gate_command(project, "tests") == (
        "make test",
        "stepkit.plugins.projects.taskrunners",
    )
    assert resolve_gate_command(project, "tests", plugins=[ShellTests()]) == (
        "./tests.sh",
        "ShellTests",
    )
    assert resolve_gate_command(project, "lint", plugins=[ShellTests()]) == (None, None)


def test_resolve_gate_command_rejects_an_unknown_gate(stepkit_project):
    with pytest.raises(ValueError, match="unknown gate 'test'"):
        resolve_gate_command(stepkit_project({}), "test")


def test_stepkit_pm_registers_plugins_last_and_honours_disabled(stepkit_project, stepkit_pm):
    project = stepkit_project({"Makefile": "test:\n\ttrue\n"})
    pm = stepkit_pm(project, ShellTests(), disabled=["taskrunners"])
    assert pm.get_plugin("ShellTests") is not None
    assert pm.get_plugin("stepkit.plugins.projects.taskrunners") is None
    assert pm.origins["ShellTests"] == "stepkit.testing"


def test_a_plugin_with_a_misspelt_hook_is_rejected(stepkit_project, stepkit_pm):
    class Typo:
        @stepkit.hookimpl
        def stepkit_tests_command(self):
            return "x"

    with pytest.raises(pluggy.PluginValidationError, match="stepkit_tests_command"):
        stepkit_pm(stepkit_project({}), Typo())


def test_fixtures_clear_the_developers_overrides(monkeypatch, request):
    monkeypatch.setenv("TEST_CMD", "from-the-shell")
    monkeypatch.setenv("STEPKIT_LOAD_PLUGINS", "")
    make = request.getfixturevalue("stepkit_project")
    project = make({"Makefile": "test:\n\ttrue\n"})
    assert resolve_gates(project)["tests"] == ("make test", "stepkit.plugins.projects.taskrunners")
    monkeypatch.setenv("TEST_CMD", "set-in-the-test")
    assert resolve_gates(project)["tests"] == ("set-in-the-test", "stepkit.plugins.overrides")
