"""A run's gate commands are chosen before the coder runs: a command the
step's own changes would change runs as it was, and each such change is a
tamper flag (``GatePlan.command_changes``).  Real plugins on a real tmp
project whose ``stepkit.toml`` the "step" rewrites between the two looks."""

from __future__ import annotations

from stepkit.config import load_config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.gate_commands import run_gate_plan, start_commands


def plan_after(tmp_path, before: str, after: str):
    """The run plan of a project whose [commands] read ``before`` when the run
    started and ``after`` at its first gate."""
    config_file = tmp_path / "stepkit.toml"
    config_file.write_text(f"[commands]\n{before}")
    settings: dict = {}
    start_commands(settings, get_plugin_manager(tmp_path), tmp_path, load_config(tmp_path))
    config_file.write_text(f"[commands]\n{after}")
    return run_gate_plan(
        settings, get_plugin_manager(tmp_path), tmp_path, load_config(tmp_path)
    ), settings


def test_a_command_the_step_changed_runs_as_it_was_before_the_step_and_is_flagged(tmp_path):
    plan, _ = plan_after(tmp_path, 'test = "pytest -q"\n', "test = \"pytest -q -k 'not slow'\"\n")
    assert plan.command("tests")[0] == "pytest -q"
    (flag,) = plan.command_changes
    assert "the step changed the tests gate's command" in flag
    assert "`pytest -q` before the step, `pytest -q -k 'not slow'` now" in flag


def test_a_command_the_step_removed_still_runs(tmp_path):
    plan, _ = plan_after(tmp_path, 'lint = "ruff check"\n', 'lint = ""\n')
    assert plan.command("lint")[0] == "ruff check"
    assert plan.command_changes == [
        (
            "the step changed the lint gate's command: `ruff check` before the step, "
            "none now; the gates run the command chosen before the step"
        )
    ]


def test_a_gate_with_no_command_before_the_step_takes_the_steps_and_says_so(tmp_path):
    plan, _ = plan_after(tmp_path, 'build = ""\n', 'build = "make"\n')
    assert plan.command("build")[0] == "make"
    assert plan.command_changes == [
        (
            "the build gate had no command before the step; the step's own changes "
            "gave it `make`, which the gates run"
        )
    ]


def test_unchanged_commands_raise_no_flag_and_the_plan_is_kept_for_the_resume(tmp_path):
    plan, settings = plan_after(tmp_path, 'test = "pytest -q"\n', 'test = "pytest -q"\n')
    assert plan.command_changes == []
    assert settings["gate_plan"]["commands"]["tests"]["command"] == "pytest -q"


def test_a_run_whose_settings_hold_no_start_commands_plans_at_its_first_gate(tmp_path):
    (tmp_path / "stepkit.toml").write_text('[commands]\ntest = "pytest -q -x"\n')
    plan = run_gate_plan({}, get_plugin_manager(tmp_path), tmp_path, load_config(tmp_path))
    assert plan.command("tests")[0] == "pytest -q -x" and plan.command_changes == []
