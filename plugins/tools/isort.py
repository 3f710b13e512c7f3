"""isort: its sections in Python's shared configuration files."""

from stepkit.plugins.tools._python import SHARED_CONFIGS
from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="isort",
        shared_configs=SHARED_CONFIGS,
        sections=("isort",),
    ),
)
