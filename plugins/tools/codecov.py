"""Codecov: its configuration (the coverage a change must keep)."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="codecov",
        configs=(r"codecov\.ya?ml",),
    ),
)
