"""Gate commands the user set explicitly; they answer before any detection.

Per gate, the environment variable (``FORMAT_CMD``, ``LINT_CMD``,
``BUILD_CMD``, ``TEST_CMD``) wins, then ``[tool.stepkit.commands]``
(``format``, ``lint``, ``build``, ``test``) from ``stepkit.toml`` or
``pyproject.toml``.  An empty string, in either place, means "this gate has
no command": the search stops and the gate is NOT RUN.  The hooks are
``tryfirst``, so they answer before task runners, language plugins, entry
points and ``stepconf.py`` (unless one of those is itself ``tryfirst``).
"""

from __future__ import annotations

import os

from stepkit.config import Config
from stepkit.hookspecs import hookimpl

#: Environment variable and ``[tool.stepkit.commands]`` key of each gate.
OVERRIDES: dict[str, tuple[str, str]] = {
    "format": ("FORMAT_CMD", "format"),
    "lint": ("LINT_CMD", "lint"),
    "build": ("BUILD_CMD", "build"),
    "tests": ("TEST_CMD", "test"),
}


def override(gate: str, config: Config) -> str | None:
    """The explicit command for ``gate``: the env variable, else the config; None if unset.

    Returned as written: :func:`stepkit.workspace.gate_commands.resolve_command` strips it and
    reads a blank one as "no command".
    """
    env_name, key = OVERRIDES[gate]
    value = os.environ.get(env_name)
    return value if value is not None else getattr(config.commands, key)


@hookimpl
def stepkit_command_override_names(gate: str) -> tuple[str, str] | None:
    return OVERRIDES.get(gate)


@hookimpl(tryfirst=True)
def stepkit_format_command(config: Config) -> str | None:
    return override("format", config)


@hookimpl(tryfirst=True)
def stepkit_lint_command(config: Config) -> str | None:
    return override("lint", config)


@hookimpl(tryfirst=True)
def stepkit_build_command(config: Config) -> str | None:
    return override("build", config)


@hookimpl(tryfirst=True)
def stepkit_test_command(config: Config) -> str | None:
    return override("tests", config)
