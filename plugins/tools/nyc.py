"""nyc: its configuration (a coverage threshold)."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="nyc",
        configs=(r"\.nycrc(\.\w+)?",),
    ),
)
