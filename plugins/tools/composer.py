"""Composer: its lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="composer",
        lockfiles=("composer.lock",),
    ),
)
