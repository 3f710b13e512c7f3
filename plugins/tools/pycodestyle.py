"""pycodestyle: its sections in Python's shared configuration files."""

from stepkit.plugins.tools._python import SHARED_CONFIGS, invocations
from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="pycodestyle",
        shared_configs=SHARED_CONFIGS,
        sections=("pycodestyle",),
        per_file=True,
        invocations=invocations("pycodestyle"),
        file_kinds=(".py",),
        flags=("--count", "--show-source", "--statistics", "-q", "-v"),
    ),
)
