"""mix: its lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="mix",
        lockfiles=("mix.lock",),
    ),
)
