"""RuboCop: its configuration."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="rubocop",
        configs=(r"\.rubocop\.yml",),
    ),
)
