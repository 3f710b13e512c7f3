"""yarn: the engines or the package manager version the project asks for
that this machine lacks, a command its ``node_modules`` lacks (``yarn
prettier`` before an install, in yarn 1's words and pnpm's alike), its
lockfile."""

from stepkit.workspace.tools import Fault, Tool

TOOLS = (
    Tool(
        name="yarn",
        faults=(
            Fault(
                r'^error (?P<pkg>\S+): The engine "(?P<engine>[\w.-]+)" is incompatible with this module\. '
                r'Expected version "(?P<want>[^"]+)"\. Got "(?P<got>[^"]+)"$',
                lambda m, _lines, _at: (
                    f"yarn: {m['pkg']} needs {m['engine']} {m['want']}; this machine has {m['got']}"
                ),
            ),
            Fault(
                r'^error This project\'s package\.json defines "packageManager": "(?P<want>[^"]+)"\. However the '
                r"current global version of Yarn is (?P<got>\S+?)\.?$",
                lambda m, _lines, _at: (
                    f"yarn: the project's packageManager is {m['want']}; this machine has yarn {m['got']}"
                ),
            ),
            # yarn 1: 'error Command "prettier" not found.'; pnpm: '  × Command "prettier" not found'
            Fault(
                r'(?:^|\s)Command "(?P<tool>[^"\s]+)" not found\.?$',
                lambda m, _lines, _at: (
                    f"{m['tool']}: command not found (not installed in the project's node_modules)"
                ),
            ),
        ),
        lockfiles=("yarn.lock",),
    ),
)
