"""Bundler: its lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="bundler",
        lockfiles=("Gemfile.lock",),
    ),
)
