"""PDM: a command missing from the project's environment, its lockfile."""

from stepkit.workspace.tools import Fault, Tool

TOOLS = (
    Tool(
        name="pdm",
        faults=(
            # pdm 2.x (cli/commands/run.py): PdmUsageError "Command 'x' is not found in your PATH."; pdm < 2.6 let
            # the FileNotFoundError through
            Fault(
                r"^\[(?:PdmUsageError|FileNotFoundError)\]: (?:Command '(?P<tool>[^']+)' is not found in your "
                r"PATH\.|\[Errno 2\] No such file or directory: '(?P<tool2>[^']+)')$",
                lambda m, _lines, _at: (
                    f"pdm: {m['tool'] or m['tool2']}: command not found (not installed in the project's "
                    "environment)"
                ),
            ),
        ),
        lockfiles=("pdm.lock",),
    ),
)
