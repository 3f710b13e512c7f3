"""prettier: its words for "no file to format" (also under ``--no-error-on-unmatched-pattern``)."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="prettier",
        nothing_to_format=(
            r"^\[error\] No files matching the pattern were found",
            r"^\[warn\] No files matching the pattern were found",
        ),
    ),
)
