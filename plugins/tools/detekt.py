"""detekt: its configuration."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="detekt",
        configs=(r"detekt\.yml",),
    ),
)
