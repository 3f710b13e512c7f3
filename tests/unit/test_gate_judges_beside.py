"""A gate's command starts before the runners' declarations are read: for
any gate but the tests gate (whose invocation needs them before it starts)
they are read in a thread beside the command (:func:`stepkit.workspace.gates.run_gate`),
and what reading them raises is raised in the gate's caller.  A real
command, the real plugin manager, a plugin that records where it was asked."""

from __future__ import annotations

import threading

import pytest

from stepkit.hookspecs import hookimpl
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.gates import run_gate


class Asked:
    def __init__(self, fails: bool = False):
        self.threads: list[str] = []
        self.fails = fails

    @hookimpl
    def stepkit_test_runners(self):
        self.threads.append(threading.current_thread().name)
        if self.fails:
            raise RuntimeError("a broken runner declaration")
        return []


def gate(tmp_path, asked: Asked, name: str = "lint"):
    pm = get_plugin_manager()
    pm.register(asked, name="asked")
    return run_gate(name, "echo ok", None, tmp_path, tmp_path / "logs", None, None, pm)


def test_the_runners_are_read_beside_the_command(tmp_path):
    asked = Asked()
    result = gate(tmp_path, asked)
    assert result.status == "pass", result.evidence
    assert asked.threads == ["stepkit-beside"]


def test_what_reading_them_raises_reaches_the_caller(tmp_path):
    with pytest.raises(RuntimeError, match="a broken runner declaration"):
        gate(tmp_path, Asked(fails=True))
