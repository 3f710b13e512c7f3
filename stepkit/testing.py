"""A pytest plugin for plugin authors: build a throw-away project, build a
plugin manager with your plugin in it, and resolve a gate's command without
running anything.

Opt-in, like pytester — enable it in a test module or ``conftest.py``::

    pytest_plugins = ["stepkit.testing"]

or on the command line with ``pytest -p stepkit.testing``.  Then::

    from stepkit.testing import resolve_gate_command

    class MyPlugin:
        @stepkit.hookimpl
        def stepkit_gate_command(self, gate, project_dir):
            if gate == "tests" and (project_dir / "tests.sh").is_file():
                return "./tests.sh"

    def test_my_plugin(stepkit_project, stepkit_pm):
        project = stepkit_project({"tests.sh": "#!/bin/sh\\n", "Makefile": "test:\\n\\ttrue\\n"})
        assert resolve_gate_command(project, "tests", plugins=[MyPlugin()]) == ("./tests.sh", "MyPlugin")
        pm = stepkit_pm(project, MyPlugin())
        assert pm.get_plugin("MyPlugin") is not None

``resolve_gates(project_dir, plugins=())`` gives every gate at once as
``{gate: (command, plugin)}``.

Fixtures:

- ``stepkit_project(files, name=None) -> Path``: writes ``files`` (relative
  path → text or bytes) under a fresh directory in ``tmp_path`` and returns
  it; call it as often as needed, each call gets its own directory.
- ``stepkit_pm(project_dir, *plugins, disabled=()) -> PluginManager``: the
  manager stepkit would build for that project (built-ins, entry points, its
  ``stepconf.py`` and configured plugins) with ``plugins`` registered last,
  so they answer before every built-in that is not ``tryfirst``.

Both fixtures clear the gate overrides (``FORMAT_CMD``, ``LINT_CMD``,
``BUILD_CMD``, ``TEST_CMD``) and ``STEPKIT_LOAD_PLUGINS`` from the
environment when they are set up, so the developer's shell cannot change a
result; set them again inside the test (``monkeypatch.setenv``) to test them.

PYTEST_DONT_REWRITE — this module has no asserts, and a test module that
imports its functions imports it before pytest registers it as a plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from stepkit.config import load_config
from stepkit.pluginmanager import ALLOW_LIST_ENV, StepkitPluginManager, get_plugin_manager
from stepkit.records import GATE_ORDER
from stepkit.workspace.gate_commands import resolve_command, resolve_commands

__all__ = ["build_project", "make_plugin_manager", "resolve_gate_command", "resolve_gates"]


def build_project(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``files`` (relative path → content) under ``root`` and return ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def make_plugin_manager(
    project_dir: Path, plugins: Iterable[Any] = (), disabled: Iterable[str] = ()
) -> StepkitPluginManager:
    """The project's plugin manager with ``plugins`` registered last.

    A plugin is registered under its ``__name__`` (modules, classes) or its
    class name (instances); one whose name ``disabled`` blocks is not.
    """
    pm = get_plugin_manager(project_dir, load_config(project_dir), list(disabled))
    for plugin in plugins:
        pm.register(
            plugin, getattr(plugin, "__name__", None) or type(plugin).__name__, "stepkit.testing"
        )
    pm.check_pending()
    return pm


def resolve_gate_command(
    project_dir: Path, gate: str, plugins: Iterable[Any] = ()
) -> tuple[str | None, str | None]:
    """The command ``gate`` would run in ``project_dir`` and the plugin that chose it.

    :param gate: a gate of the gate table (``format``, ``lint``, ``build``, ``tests`` …).
    :param plugins: extra plugin objects, registered last (see
        :func:`make_plugin_manager`).
    :return: ``(command, plugin)`` as :func:`stepkit.workspace.gate_commands.resolve_command`
        gives it: command None when the gate would be NOT RUN.
    """
    pm = make_plugin_manager(project_dir, plugins)
    return resolve_command(pm, gate, project_dir, load_config(project_dir))


def resolve_gates(
    project_dir: Path, plugins: Iterable[Any] = ()
) -> dict[str, tuple[str | None, str | None]]:
    """Every gate's ``(command, plugin)``, in gate order, from one plugin manager."""
    return resolve_commands(
        make_plugin_manager(project_dir, plugins), project_dir, load_config(project_dir)
    )


def _clear_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clear the allow-list and every gate's override variable, as the
    built-in plugins name them (``stepkit_command_override_names``)."""
    monkeypatch.delenv(ALLOW_LIST_ENV, raising=False)
    pm = get_plugin_manager()
    for gate in GATE_ORDER:
        names = pm.hook.stepkit_command_override_names(gate=gate)
        if names:
            monkeypatch.delenv(names[0], raising=False)


@pytest.fixture
def stepkit_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Factory: ``stepkit_project(files, name=None) -> Path`` (a new project dir)."""
    _clear_overrides(monkeypatch)
    count = 0

    def make(files: dict[str, str | bytes], name: str | None = None) -> Path:
        nonlocal count
        count += 1
        return build_project(tmp_path / (name or f"project{count}"), files)

    return make


@pytest.fixture
def stepkit_pm(monkeypatch: pytest.MonkeyPatch) -> Callable[..., StepkitPluginManager]:
    """Factory: ``stepkit_pm(project_dir, *plugins, disabled=()) -> PluginManager``."""
    _clear_overrides(monkeypatch)

    def make(
        project_dir: Path, *plugins: Any, disabled: Iterable[str] = ()
    ) -> StepkitPluginManager:
        return make_plugin_manager(project_dir, plugins, disabled)

    return make
