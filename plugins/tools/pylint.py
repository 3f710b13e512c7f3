"""pylint: the comment that silences it and its configuration."""

from stepkit.plugins.tools._python import SHARED_CONFIGS
from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="pylint",
        silencers=(("pylint disable", r"pylint:\s*disable"),),
        configs=(r"\.?pylintrc",),
        shared_configs=SHARED_CONFIGS,
        sections=("pylint",),
    ),
)
