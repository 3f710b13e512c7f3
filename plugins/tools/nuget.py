"""NuGet: its lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="nuget",
        lockfiles=("packages.lock.json",),
    ),
)
