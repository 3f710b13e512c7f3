"""pyright: its sections in Python's shared configuration files."""

from stepkit.plugins.tools._python import SHARED_CONFIGS
from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="pyright",
        shared_configs=SHARED_CONFIGS,
        sections=("pyright",),
    ),
)
