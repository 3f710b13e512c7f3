"""golangci-lint: the comment that silences it and its configuration."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="golangci-lint",
        silencers=(("//nolint", r"//\s*nolint\b"),),
        configs=(r"\.golangci\.(yml|yaml|toml)",),
    ),
)
