"""black: its sections in Python's shared configuration files and its word for "no file to format"."""

from stepkit.plugins.tools._python import SHARED_CONFIGS
from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="black",
        shared_configs=SHARED_CONFIGS,
        sections=("black",),
        nothing_to_format=(r"^No Python files are present to be formatted\. Nothing to do",),
    ),
)
