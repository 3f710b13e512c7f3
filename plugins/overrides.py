"""Gate commands the user set explicitly; they answer before any detection.

Per gate of the gate table (:data:`stepkit.gatetable.GATES`), its
environment variable (``FORMAT_CMD``, ``LINT_CMD``, ``BUILD_CMD``,
``TEST_CMD`` …) wins, then its key of ``[tool.stepkit.commands]``
(``format``, ``lint``, ``build``, ``test`` …) from ``stepkit.toml`` or
``pyproject.toml``.  An empty string, in either place, means "this gate has
no command": the search stops and the gate is NOT RUN.  The hook is
``tryfirst``, so it answers before task runners, language plugins, entry
points and ``stepconf.py`` (unless one of those is itself ``tryfirst``).
"""

from __future__ import annotations

import os

from stepkit import gatetable
from stepkit.config import Config
from stepkit.hookspecs import hookimpl


def override(gate: str, config: Config) -> str | None:
    """The explicit command for ``gate``: the env variable, else the config; None if unset.

    Returned as written: :func:`stepkit.workspace.gate_commands.resolve_command` strips it and
    reads a blank one as "no command".
    """
    value = os.environ.get(gatetable.gate(gate).env)
    return value if value is not None else config.commands.gate(gate)


@hookimpl
def stepkit_command_override_names(gate: str) -> tuple[str, str] | None:
    row = next((row for row in gatetable.GATES if row.name == gate), None)
    return (row.env, row.keys[0]) if row else None


@hookimpl(tryfirst=True)
def stepkit_gate_command(gate: str, config: Config) -> str | None:
    return override(gate, config)
