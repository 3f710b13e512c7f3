"""bun: its lockfiles."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="bun",
        lockfiles=("bun.lockb", "bun.lock"),
    ),
)
