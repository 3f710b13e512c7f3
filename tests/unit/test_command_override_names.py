"""Where a gate's command is set by hand comes from the plugins
(``stepkit_command_override_names``), never from a built-in plugin the core imports."""

from __future__ import annotations

import os

import stepkit
from stepkit.pluginmanager import DEFAULT_PLUGINS, get_plugin_manager
from stepkit.protocol.envfault import environment_fault_reason
from stepkit.records import GateResult
from stepkit.testing import _clear_overrides

FAULT = GateResult(
    name="tests", status="error", command="pytest", exit_code=127, summary="pytest: not found"
)


class MyTool:
    @stepkit.hookimpl(tryfirst=True)
    def stepkit_command_override_names(self, gate):
        return ("MYTOOL_TEST", "unit") if gate == "tests" else None


def test_the_built_in_names_reach_the_environment_fault_message():
    reason = environment_fault_reason(FAULT, get_plugin_manager())
    assert reason.startswith("Environment fault: tests: pytest: not found. ")
    assert 'set the tests command (TEST_CMD, or test = "…" under [tool.stepkit.commands]' in reason


def test_a_plugin_names_its_own_and_without_any_the_message_names_none():
    pm = get_plugin_manager()
    pm.register(MyTool(), "mytool")
    assert "(MYTOOL_TEST, or unit = " in environment_fault_reason(FAULT, pm)
    bare = get_plugin_manager(
        builtins=[name for name in DEFAULT_PLUGINS if name != "stepkit.plugins.overrides"]
    )
    reason = environment_fault_reason(FAULT, bare)
    assert "TEST_CMD" not in reason and "set the tests command (in stepconf.py)" in reason


def test_the_testing_fixtures_clear_every_variable_the_plugins_name(monkeypatch):
    for name in ("FORMAT_CMD", "LINT_CMD", "BUILD_CMD", "TEST_CMD"):
        monkeypatch.setenv(name, "false")
    _clear_overrides(monkeypatch)
    assert not {"FORMAT_CMD", "LINT_CMD", "BUILD_CMD", "TEST_CMD"} & set(os.environ)
