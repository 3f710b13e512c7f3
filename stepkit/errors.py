"""Errors that stepkit reports to the user as one line, without a traceback."""


class StepkitError(Exception):
    """A problem the user can fix (bad input, bad config); the CLI prints it as one line."""

    exit_code = 2


class UsageError(StepkitError):
    """Bad command-line input or configuration: no run was started (exit 2)."""


class PlanError(StepkitError):
    """The plan repo cannot be read at all (no plans dir, no steps dir)."""


class GraphError(StepkitError):
    """A graph definition is invalid; the message names the node and the field."""


class PluginError(StepkitError):
    """A plugin needed for this command could not be loaded or misbehaved."""
