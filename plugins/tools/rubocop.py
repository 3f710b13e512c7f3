"""RuboCop: its configuration."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="rubocop",
        configs=(r"\.rubocop\.yml",),
        per_file=True,
        invocations=("rubocop", "bundle exec rubocop"),
        file_kinds=(".rb", ".rake", ".gemspec"),
        flags=("-a", "-A", "--autocorrect", "--autocorrect-all", "-P", "--parallel", "-D"),
        explicit_files=("--force-exclusion",),
    ),
)
