"""``-p no:NAME`` and ``STEPKIT_LOAD_PLUGINS`` block names in pluggy itself, and
the essential plugins (the handoff check, the gate answers) cannot be switched off."""

from __future__ import annotations

import json

import pytest

import stepkit
from stepkit.cli import main
from stepkit.pluginmanager import get_plugin_manager

pytest_plugins = ["stepkit.testing"]

STEPCONF = (
    "import stepkit\n\n@stepkit.hookimpl\ndef stepkit_test_command():\n    return './local-tests'\n"
)
CONFIGURED = (
    "import stepkit\n\n@stepkit.hookimpl\ndef stepkit_lint_command():\n    return './local-lint'\n"
)


class ShellTests:
    @stepkit.hookimpl
    def stepkit_test_command(self):
        return "./tests.sh"


def listed(capsys, project, *flags):
    assert main(["plugins", "--project-dir", str(project), "--json", *flags]) == 0
    return {p["name"] for p in json.loads(capsys.readouterr().out)["plugins"]}


@pytest.mark.parametrize("spelling", ["python", "stepkit.plugins.projects.python"])
def test_a_builtin_is_blocked_by_its_short_or_its_full_name(stepkit_project, capsys, spelling):
    names = listed(capsys, stepkit_project({}), "-p", f"no:{spelling}")
    assert "stepkit.plugins.projects.python" not in names
    assert "stepkit.plugins.projects.rust" in names


def test_stepconf_and_a_configured_plugin_are_blocked_by_their_names(stepkit_project, capsys):
    project = stepkit_project(
        {
            "stepconf.py": STEPCONF,
            "lint_plugin.py": CONFIGURED,
            "stepkit.toml": 'plugins = ["lint_plugin.py"]\n',
        }
    )
    assert {"stepconf", "lint_plugin.py"} <= listed(capsys, project)
    names = listed(capsys, project, "-p", "no:stepconf", "-p", "no:lint_plugin.py")
    assert not {"stepconf", "lint_plugin.py"} & names


def test_a_blocked_name_cannot_be_registered_later(stepkit_project, stepkit_pm):
    import stepkit.plugins.projects.python as python_plugin

    project = stepkit_project({"tests.sh": ""})
    pm = stepkit_pm(project, ShellTests(), disabled=["python", "ShellTests"])
    assert pm.is_blocked("stepkit.plugins.projects.python")
    assert pm.register(python_plugin, name="stepkit.plugins.projects.python") is None
    assert pm.get_plugin("ShellTests") is None
    assert "ShellTests" not in pm.origins


def test_names_left_out_by_the_allow_list_are_blocked(stepkit_project, monkeypatch):
    project = stepkit_project({"stepconf.py": STEPCONF})
    monkeypatch.setenv("STEPKIT_LOAD_PLUGINS", "")
    pm = get_plugin_manager(project)
    assert pm.is_blocked("stepconf")
    assert pm.get_plugin("stepkit.plugins.projects.python") is not None  # built-ins always load


@pytest.mark.parametrize(
    "spelling",
    [
        "ask",
        "stepkit.plugins.ask",
        "check_handoff",
        "stepkit.plugins.stages.check_handoff",
    ],
)
def test_an_essential_plugin_cannot_be_disabled(stepkit_project, capsys, spelling):
    code = main(["detect", "--project-dir", str(stepkit_project({})), "-p", f"no:{spelling}"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "is essential and cannot be disabled" in err and f"no:{spelling}" in err


def test_the_allow_list_does_not_leave_out_the_essential_plugins(
    stepkit_project, capsys, monkeypatch
):
    monkeypatch.setenv("STEPKIT_LOAD_PLUGINS", "")
    names = listed(capsys, stepkit_project({}))
    assert {"stepkit.plugins.ask", "stepkit.plugins.stages.check_handoff"} <= names
