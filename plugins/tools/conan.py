"""Conan: its lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="conan",
        lockfiles=("conan.lock",),
    ),
)
