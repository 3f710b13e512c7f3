"""A gate command detection chose that cannot start here gives its place,
before the coder, to the gate's next candidate that can
(:func:`stepkit.workspace.gate_commands.start_commands`): the run is not
ended on it, and the gates run the candidate, with no "the step changed the
command" flag.  The user's own command is never replaced.  A real git
project; the start's choice and its precheck as a run makes them."""

from __future__ import annotations

from stepkit.config import load_config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.gate_commands import START_COMMANDS_KEY, run_gate_plan, start_commands
from stepkit.workspace.precheck import start_faults
from tests.e2e.test_init_proves import ci_project


def _start(project):
    config = load_config(project)
    pm = get_plugin_manager(project, config)
    settings: dict = {}
    start_commands(settings, pm, project, config)
    return settings, pm, config


def test_a_ci_command_that_cannot_start_gives_its_place_to_the_next_candidate(tmp_path):
    project = ci_project(tmp_path, "hatch test")  # no hatch here; the Python plugin offers pytest
    settings, pm, config = _start(project)
    entry = settings[START_COMMANDS_KEY]["tests"]
    assert entry["command"].startswith("python -m pytest"), entry
    assert entry["replaces"] == "hatch test" and "hatch" in entry["why"]
    assert start_faults(settings, pm, project) == []
    plan = run_gate_plan(settings, pm, project, config)
    assert plan.command("tests")[0] == entry["command"]
    assert plan.command_changes == []


def test_the_users_own_command_is_never_replaced(tmp_path):
    project = ci_project(tmp_path, "python -m pytest -q")
    (project / "stepkit.toml").write_text('[commands]\ntest = "hatch test"\n')
    settings, pm, _ = _start(project)
    assert settings[START_COMMANDS_KEY]["tests"]["command"] == "hatch test"
    assert [fault.name for fault in start_faults(settings, pm, project)] == ["tests"]
