"""The built-in tools other than test runners (linters, type checkers,
formatters, package managers): one module per tool beside this one, each
declaring its :class:`~stepkit.workspace.tools.Tool` (``TOOLS``).

Every module has the same small interface: ``TOOLS``, the tools it
declares.  This package is a plugin: its one hookimpl gives them all
through ``stepkit_tools``, the hook through which any plugin adds a tool.
The modules are found by name (a new tool is one module more); they are
read in their names' order, but for a tool that declares it comes
``before`` another (rustup before cargo, mypy before eslint).
"""

from __future__ import annotations

from stepkit.hookspecs import hookimpl
from stepkit.plugins.declarations import declared_in
from stepkit.workspace.tools import Tool


def declared() -> list[Tool]:
    """Every built-in tool, module by module (by name)."""
    return declared_in(__name__, __path__, "TOOLS")


@hookimpl
def stepkit_tools() -> list[Tool]:
    """The built-in tools (ruff, mypy, eslint, cargo, uv, npm …)."""
    return declared()
