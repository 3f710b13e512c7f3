"""rustup: a toolchain the project pins that is not installed."""

from stepkit.workspace.tools import Fault, Tool

TOOLS = (
    Tool(
        name="rustup",
        before=("cargo",),
        faults=(
            Fault(
                r"toolchain '(?P<toolchain>[^']+)' is not installed",
                lambda m, _lines, _at: f"rustup: toolchain {m['toolchain']} is not installed",
            ),
        ),
    ),
)
