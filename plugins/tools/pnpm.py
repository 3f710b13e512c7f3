"""pnpm: an engine or package manager version the project refuses, its lockfile."""

from stepkit.workspace.tools import Fault, Tool

TOOLS = (
    Tool(
        name="pnpm",
        faults=(
            Fault(
                r"\bERR_PNPM_(?P<code>UNSUPPORTED_ENGINE|BAD_PM_VERSION)\b\s*(?P<why>.*)$",
                lambda m, _lines, _at: (
                    f"pnpm: {m['code'].lower().replace('_', ' ')} ({m['why'].strip() or m['code']})"
                ),
            ),
        ),
        lockfiles=("pnpm-lock.yaml",),
    ),
)
