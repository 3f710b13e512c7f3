"""c8: its configuration (a coverage threshold)."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="c8",
        configs=(r"\.c8rc(\.\w+)?",),
    ),
)
