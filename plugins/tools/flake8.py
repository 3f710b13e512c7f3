"""flake8: the ``# noqa`` comment that silences it (and ruff, which reads it too) and its configuration."""

from stepkit.plugins.tools._python import SHARED_CONFIGS, invocations
from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="flake8",
        silencers=(("# noqa", r"#\s*noqa\b"),),
        configs=(r"\.flake8",),
        shared_configs=SHARED_CONFIGS,
        sections=("flake8",),
        per_file=True,
        invocations=invocations("flake8"),
        file_kinds=(".py",),
        flags=("--count", "--show-source", "--statistics", "--exit-zero", "-q", "-v"),
    ),
)
