"""Swift Package Manager: its lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="swiftpm",
        lockfiles=("Package.resolved",),
    ),
)
