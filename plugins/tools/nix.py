"""Nix flakes: their lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="nix",
        lockfiles=("flake.lock",),
    ),
)
