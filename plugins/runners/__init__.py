"""The built-in test runners: one module per runner beside this one, each
declaring its :class:`~stepkit.workspace.runners.TestRunner` (``RUNNERS``).

Every module has the same small interface: ``RUNNERS``, the runners it
declares.  This package is a plugin: its one hookimpl gives them all
through ``stepkit_test_runners``, the hook through which any plugin adds a
runner.  The modules are found by name (a new runner is one module more);
the order they are recognised in is the modules' names', but for a runner
that declares it comes ``before`` another (vitest before jest, nextest
before cargo).
"""

from __future__ import annotations

from stepkit.hookspecs import hookimpl
from stepkit.plugins.declarations import declared_in
from stepkit.workspace.runners import TestRunner


def declared() -> list[TestRunner]:
    """Every built-in runner, module by module (by name)."""
    return declared_in(__name__, __path__, "RUNNERS")


@hookimpl
def stepkit_test_runners() -> list[TestRunner]:
    """The built-in runners (pytest, jest, vitest, go test, cargo …)."""
    return declared()
