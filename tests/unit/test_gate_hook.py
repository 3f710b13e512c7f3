"""One hook names a gate's command (``stepkit_gate_command``); the four
per-gate hooks it replaces are deprecated aliases, still asked in the same
call and in the place pluggy's order gives them."""

from __future__ import annotations

import itertools
import random
import warnings

import pluggy
import pytest

import stepkit
from stepkit.config import Config
from stepkit.gatetable import GATES
from stepkit.pluginmanager import get_plugin_manager
from stepkit.testing import resolve_gate_command, resolve_gates
from stepkit.workspace.gate_commands import resolve_command

pytest_plugins = ["stepkit.testing"]

NEW_STEPCONF = """\
import stepkit


@stepkit.hookimpl
def stepkit_gate_command(gate, project_dir):
    return {"lint": "./lint", "tests": "./run-tests"}.get(gate)
"""

OLD_STEPCONF = """\
import stepkit


@stepkit.hookimpl
def stepkit_test_command(project_dir, config):
    return "./old-tests"
"""


def test_a_plugin_answers_every_gate_through_one_hook(stepkit_project):
    project = stepkit_project({"Makefile": "build:\n\ttrue\n", "stepconf.py": NEW_STEPCONF})
    assert resolve_gates(project) == {
        "format": (None, None),
        "lint": ("./lint", "stepconf"),
        "build": ("make build", "stepkit.plugins.projects.taskrunners"),
        "tests": ("./run-tests", "stepconf"),
    }


def test_a_plugin_of_a_deprecated_hook_still_answers_and_is_warned_of(stepkit_project):
    project = stepkit_project({"Makefile": "test:\n\ttrue\n", "stepconf.py": OLD_STEPCONF})
    with pytest.warns(DeprecationWarning, match="stepkit_gate_command"):
        assert resolve_gate_command(project, "tests") == ("./old-tests", "stepconf")


def _plugin(hook: str, option: str, answer: str | None) -> object:
    """A plugin class whose one hookimpl (``hook``, with ``option``) answers ``answer``."""

    def stepkit_gate_command(gate):
        return answer if gate == "tests" else None

    def stepkit_test_command():
        return answer

    function = stepkit_gate_command if hook == "new" else stepkit_test_command
    marked = stepkit.hookimpl(**({option: True} if option else {}))(function)
    return type("Plugin", (), {function.__name__: staticmethod(marked)})


#: A plugin: its hook (the new one, or the deprecated one of the tests gate),
#: its option, and whether it answers.
KINDS = list(itertools.product(("new", "old"), ("", "tryfirst", "trylast"), (True, False)))


def _manager(plugins) -> pluggy.PluginManager:
    pm = get_plugin_manager(builtins=[])
    for index, (hook, option, answers) in enumerate(plugins):
        pm.register(_plugin(hook, option, f"p{index}" if answers else None), f"p{index}")
    return pm


@pytest.mark.slow
def test_the_deprecated_hooks_are_asked_in_pluggys_order_as_one_hook(tmp_path):
    """Registered in any order, with any of tryfirst and trylast, answering
    or not, the answer is the one pluggy gives when every plugin implements
    the one hook."""
    rng = random.Random(37)
    cases = [rng.choices(KINDS, k=rng.randint(2, 5)) for _ in range(200)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for plugins in cases:
            as_one = [("new", option, answers) for _, option, answers in plugins]
            pluggys = _manager(as_one).hook.stepkit_gate_command(
                gate="tests", project_dir=tmp_path, config=Config()
            )
            command, plugin = resolve_command(_manager(plugins), "tests", tmp_path, Config())
            assert (command, plugin) == (pluggys, pluggys), plugins


def test_every_gate_of_the_table_has_its_deprecated_hook_asked(stepkit_project):
    """Each of the four gates answers through its old hook too."""
    stepconf = "import stepkit\n" + "".join(
        f"\n\n@stepkit.hookimpl\ndef {row.legacy_hook}():\n    return 'old-{row.name}'\n"
        for row in GATES
        if row.legacy_hook
    )
    project = stepkit_project({"stepconf.py": stepconf})
    with pytest.warns(DeprecationWarning):
        gates = resolve_gates(project)
    assert gates == {row.name: (f"old-{row.name}", "stepconf") for row in GATES}
