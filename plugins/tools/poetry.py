"""Poetry: a command missing from the project's environment, its lockfile."""

from stepkit.workspace.tools import Fault, Tool

TOOLS = (
    Tool(
        name="poetry",
        faults=(
            Fault(
                r"^Command not found: (?P<tool>\S+)$",
                lambda m, _lines, _at: (
                    f"poetry: {m['tool']}: command not found (not installed in the project's environment)"
                ),
            ),
        ),
        lockfiles=("poetry.lock",),
    ),
)
