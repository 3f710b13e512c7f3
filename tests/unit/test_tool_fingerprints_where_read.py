"""The tools the step changed (the project's tool directories, the installed
files of the gates' tools and of stepkit) fail only a passing tests gate
(:meth:`stepkit.workspace.gates.GateRunner._name_tools`), so only the nodes
that run the tests gate look for them: the format, lint and build gates
never read that look, and each one took a walk of every installed file
(tens of milliseconds a node, every fix round).  Real nodes on a real git
project with the real plugins; the fingerprints are counted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stepkit.config import load_config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.protocol.nodes.verify import verify_build, verify_format_lint, verify_tests
from stepkit.records import StageContext
from stepkit.workspace import installed, toolpath
from stepkit.workspace.gate_commands import (
    settle_fingerprint,
    start_commands,
    start_fingerprint,
)
from tests.support.gitrepo import init_repo


@pytest.fixture
def at_node(tmp_path: Path):
    project = init_repo(
        tmp_path / "project",
        {
            "calc.py": "x = 1\n",
            "test_calc.py": "def test_x():\n    assert True\n",
            "stepkit.toml": '[commands]\nformat = "true"\nlint = "true"\nbuild = "true"\n'
            f"test = \"'{sys.executable}' -m pytest -q -p no:cacheprovider\"\n",
            "plans/steps/01-a.md": "---\ntitle: A\n---\n",
        },
    )
    pm, config, settings = get_plugin_manager(project), load_config(project), {}
    start_commands(settings, pm, project, config)
    start_fingerprint(settings, pm, project)
    settle_fingerprint(settings, pm, project)  # as a run does before its first gate

    def context(node: str) -> StageContext:
        return StageContext(
            node=node,
            project_dir=project,
            plans_dir=project / "plans",
            state={},
            settings=settings,
            config=config,
            pm=pm,
            adhoc_dir=tmp_path / "adhoc",
        )

    return context


@pytest.fixture
def looks(monkeypatch) -> list[str]:
    """One entry per look at the tools (installed files, tool directories)."""
    seen: list[str] = []
    for module, kind in ((installed, "installed"), (toolpath, "tool dirs")):
        real = module.fingerprint

        def counted(*args, _real=real, _kind=kind, **kwargs):
            seen.append(_kind)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, "fingerprint", counted)
    return seen


def test_the_format_lint_and_build_gates_do_not_look_at_the_tools(at_node, looks):
    assert verify_format_lint(at_node("verify_format_lint")).route == "pass"
    assert verify_build(at_node("verify_build")).route == "pass"
    assert looks == []


def test_the_tests_gate_still_looks_at_them_and_fails_on_a_change(at_node, looks):
    ctx = at_node("verify_tests")
    ctx.settings["installed_fingerprint"] = {
        **ctx.settings["installed_fingerprint"],
        "/nowhere/site-packages/_pytest/reports.py": "0" * 64,
    }
    outcome = verify_tests(ctx)
    assert "installed" in looks
    assert outcome.route == "fail", outcome
    (tests,) = [g for g in outcome.updates["gates"] if g["name"] == "tests"]
    assert "the step changed tools the gates run" in tests["summary"]
    assert "/nowhere/site-packages/_pytest/reports.py (removed)" in tests["summary"]
