"""SwiftLint: its configuration."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="swiftlint",
        configs=(r"\.swiftlint\.yml",),
    ),
)
