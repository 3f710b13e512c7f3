"""Commands fixed once: every gate of a runner runs the command resolved
before its first gate, whatever the gates do to the project meanwhile."""

from __future__ import annotations

import sys
from pathlib import Path

from stepkit import hookimpl
from stepkit.config import Config
from stepkit.workspace.gate_commands import GatePlan, plan_gates, run_gate_plan
from stepkit.workspace.gates import GateRunner, run_gates
from tests.support.evidence_logs import evidence_pm

PY = sys.executable


class LockfileMinded:
    """A project plugin that, like a language plugin, prefixes the build with
    ``uv run`` once a ``uv.lock`` exists; its lint creates one."""

    def __init__(self) -> None:
        self.asked = 0

    @hookimpl
    def stepkit_lint_command(self):
        self.asked += 1
        return f"{PY} -c \"open('uv.lock', 'w').write('version = 1')\""

    @hookimpl
    def stepkit_build_command(self, project_dir: Path):
        self.asked += 1
        return "echo uv run build" if (project_dir / "uv.lock").exists() else "echo build"


def minded_pm():
    pm = evidence_pm()
    plugin = LockfileMinded()
    pm.register(plugin, name="minded")
    return pm, plugin


def test_a_lint_that_creates_a_lockfile_does_not_change_the_build_command(tmp_path):
    pm, _ = minded_pm()
    lint, build = run_gates(pm, tmp_path, Config(), tmp_path / "logs", gates=["lint", "build"])
    assert lint.status == "pass" and (tmp_path / "uv.lock").exists()
    assert build.command == "echo build"


def test_the_runner_asks_the_plugins_once_before_the_first_gate(tmp_path):
    pm, plugin = minded_pm()
    runner = GateRunner(pm, tmp_path, Config(), tmp_path / "logs")
    asked = plugin.asked
    runner.run(["lint"])
    runner.run(["build"])
    assert plugin.asked == asked == 2  # one resolve of each hook, at construction


def test_a_run_keeps_its_plan_in_the_settings_and_uses_it_afterwards(tmp_path):
    pm, _ = minded_pm()
    settings: dict = {}
    first = run_gate_plan(settings, pm, tmp_path, Config())
    (tmp_path / "uv.lock").write_text("")
    again = run_gate_plan(settings, pm, tmp_path, Config())
    assert again == first and again.command("build") == ("echo build", "minded")
    assert GatePlan.model_validate(settings["gate_plan"]) == first  # plain JSON data, as stored
    assert plan_gates(pm, tmp_path, Config()).command("build")[0] == "echo uv run build"
