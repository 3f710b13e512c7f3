"""Hook wrappers (``wrapper=True`` and the older ``hookwrapper=True``) wrap the
firstresult hooks stepkit calls, and the plugin that answered is still named."""

from __future__ import annotations

import json

import pytest

import stepkit
from stepkit.cli import main
from stepkit.pluginmanager import first_answer, get_plugin_manager
from stepkit.records import Paused, Question
from stepkit.testing import resolve_gate_command

pytest_plugins = ["stepkit.testing"]

WRAPPING_STEPCONF = """\
import stepkit


@stepkit.hookimpl(wrapper=True)
def stepkit_test_command(project_dir, config):
    command = yield
    return f"{command} -j4"
"""
QUESTION = Question(
    node="gate_deviation", kind="approval", text="Go on?", options=["proceed", "abort"]
)


class ForceFix:
    """An old-style wrapper: it changes the answer through the outcome."""

    @stepkit.hookimpl(hookwrapper=True)
    def stepkit_lint_command(self, project_dir):
        outcome = yield
        outcome.force_result(f"{outcome.get_result()} --fix")


class Shout:
    """Wraps the built-in answer; records what went through."""

    def __init__(self) -> None:
        self.seen: list[object] = []

    @stepkit.hookimpl(wrapper=True)
    def stepkit_ask(self, question, settings):
        try:
            answer = yield
        except Paused as paused:
            self.seen.append(paused)
            raise
        self.seen.append(answer)
        return answer.upper()


def ask_pm(*plugins):
    pm = get_plugin_manager(builtins=["stepkit.plugins.ask"])
    for plugin in plugins:
        pm.register(plugin, type(plugin).__name__)
    return pm


def test_a_wrapper_of_a_command_hook_changes_the_command_and_detect_names_the_answering_plugin(
    stepkit_project, capsys
):
    project = stepkit_project({"Makefile": "test:\n\ttrue\n", "stepconf.py": WRAPPING_STEPCONF})
    assert main(["detect", "--project-dir", str(project), "--json"]) == 0
    gates = {g["name"]: g for g in json.loads(capsys.readouterr().out)["gates"]}
    assert gates["tests"] == {
        "name": "tests",
        "command": "make test -j4",
        "plugin": "stepkit.plugins.projects.taskrunners",
        "source": None,
        "fault": None,
        "candidates": [],
    }


def test_an_old_style_hookwrapper_forces_the_result(stepkit_project):
    project = stepkit_project({"pyproject.toml": "[tool.ruff]\n"})
    assert resolve_gate_command(project, "lint", plugins=[ForceFix()]) == (
        "ruff check --fix",
        "stepkit.plugins.projects.python",
    )


def test_a_wrapper_of_stepkit_ask_changes_the_answer():
    shout = Shout()
    answer = first_answer(
        ask_pm(shout),
        "stepkit_ask",
        question=QUESTION,
        settings={"answers": {"gate_deviation": "proceed"}},
    )
    assert answer == ("PROCEED", "stepkit.plugins.ask")
    assert shout.seen == ["proceed"]


def test_a_wrapper_sees_the_pause_the_answering_plugin_raises():
    shout = Shout()
    with pytest.raises(Paused):
        first_answer(
            ask_pm(shout), "stepkit_ask", question=QUESTION, settings={"interactive": False}
        )
    assert len(shout.seen) == 1 and isinstance(shout.seen[0], Paused)


def test_hook_call_monitoring_sees_the_call():
    pm = ask_pm()
    calls = []
    pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: calls.append(name),
        lambda outcome, name, impls, kwargs: calls.append(outcome.get_result()),
    )
    first_answer(
        pm, "stepkit_ask", question=QUESTION, settings={"answers": {"gate_deviation": "abort"}}
    )
    assert calls == ["stepkit_ask", "abort"]


def test_no_answer_is_none_and_no_plugin():
    assert first_answer(ask_pm(), "stepkit_orient", ctx=None) == (None, None)


def answers(answer, **options):
    """A plugin whose plain ``stepkit_ask`` answers ``answer``."""

    def stepkit_ask(question, settings):
        return answer

    return type(
        "Answers", (), {"stepkit_ask": staticmethod(stepkit.hookimpl(**options)(stepkit_ask))}
    )()


def test_the_answering_plugin_is_found_in_pluggys_order():
    """tryfirst before the last registered before the first registered before trylast."""
    pm = get_plugin_manager(builtins=[])
    for name, plugin in [
        ("late", answers("late", trylast=True)),
        ("first-registered", answers("first-registered")),
        ("last-registered", answers(None)),
        ("early", answers("early", tryfirst=True)),
    ]:
        pm.register(plugin, name)
    assert first_answer(pm, "stepkit_ask", question=QUESTION, settings={}) == ("early", "early")
    assert first_answer(pm, "stepkit_ask", without=["early"], question=QUESTION, settings={}) == (
        "first-registered",
        "first-registered",
    )


def test_a_left_out_wrapper_does_not_wrap():
    shout = Shout()
    pm = ask_pm(shout)
    answer = first_answer(
        pm,
        "stepkit_ask",
        without=["Shout"],
        question=QUESTION,
        settings={"answers": {"gate_deviation": "proceed"}},
    )
    assert answer == ("proceed", "stepkit.plugins.ask")
    assert shout.seen == []


def test_first_answer_uses_only_pluggys_public_api():
    """No private attribute of a pluggy object (``hook._hookexec``): those
    change between pluggy releases without notice."""
    import ast
    import inspect

    import stepkit.pluginmanager

    tree = ast.parse(inspect.getsource(stepkit.pluginmanager.first_answer))
    private = [
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]
    assert private == []
