"""coverage.py: the pragma that leaves a line out of it and its configuration (a threshold it fails under)."""

from stepkit.plugins.tools._python import SHARED_CONFIGS
from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="coverage",
        silencers=(("pragma: no cover", r"pragma:\s*no\s*cover"),),
        configs=(r"\.coveragerc",),
        shared_configs=SHARED_CONFIGS,
        sections=("coverage",),
    ),
)
