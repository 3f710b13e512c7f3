"""yarn: the engines or the package manager version the project asks for
that this machine lacks, its lockfile."""

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
        ),
        lockfiles=("yarn.lock",),
    ),
)
