"""Gradle: its dependency lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="gradle",
        lockfiles=("gradle.lockfile",),
    ),
)
