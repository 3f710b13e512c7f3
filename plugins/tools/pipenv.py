"""Pipenv: its lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="pipenv",
        lockfiles=("Pipfile.lock",),
    ),
)
