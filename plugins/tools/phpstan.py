"""PHPStan: its configuration."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="phpstan",
        configs=(r"phpstan\.neon(\.dist)?",),
    ),
)
