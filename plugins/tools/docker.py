"""docker: a command that needs a terminal, a daemon that is not running."""

import re

from stepkit.workspace.tools import Fault, Tool

TOOLS = (
    Tool(
        name="docker",
        faults=(
            # docker's cli (cli/command/container/run.go): "the input device is not a TTY"
            Fault(
                r"the input device is not a TTY",
                lambda m, _lines, _at: (
                    "the command needs a terminal (docker: the input device is not a TTY)"
                ),
                re.IGNORECASE,
            ),
            Fault(
                r"Cannot connect to the Docker daemon at (?P<host>\S+?)\.? Is the docker daemon running\?",
                lambda m, _lines, _at: (
                    f"docker: cannot connect to the Docker daemon at {m['host']} (is it running?)"
                ),
            ),
        ),
    ),
)
