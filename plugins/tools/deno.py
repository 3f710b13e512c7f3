"""deno: its lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="deno",
        lockfiles=("deno.lock",),
    ),
)
