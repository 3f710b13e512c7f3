"""Errors that stepkit reports to the user as one line, without a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

_PLAIN_MESSAGES = {"extra_forbidden": "unknown field", "missing": "missing"}


def describe_validation(exc: ValidationError, limit: int = 1) -> str:
    """The first ``limit`` problems pydantic found, as ``field.path: message;
    ...`` (one line, for an error, a fault note or a correction to a model)."""
    problems = []
    for err in exc.errors(include_url=False)[:limit]:
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        problems.append(f"{where}: {_PLAIN_MESSAGES.get(err['type'], err['msg'])}")
    return "; ".join(problems)[:1500]


class StepkitError(Exception):
    """A problem the user can fix (bad input, bad config); the CLI prints it as one line."""

    exit_code = 2


class UsageError(StepkitError):
    """Bad command-line input or configuration: no run was started (exit 2)."""


class ModelFault(StepkitError):
    """The engine could not give the answer a command needed (exit 1)."""

    exit_code = 1


class PlanError(StepkitError):
    """The plan repo cannot be read at all (no plans dir, no steps dir)."""


class GraphError(StepkitError):
    """A graph definition is invalid; the message names the node and the field."""


class PluginError(StepkitError):
    """A plugin needed for this command could not be loaded or misbehaved."""
