"""pre-commit (and prek): it could not set up a hook's environment (clone
its repository, install its dependencies).  pre-commit says so with
"An unexpected error has occurred" and exit 3, never for a hook's own
verdict (a hook that fails is "Failed" and exit 1): no hook judged the code."""

from __future__ import annotations

import re

from stepkit.workspace.tools import Fault, Tool


def _setup(m: re.Match[str], lines: list[str], at: int) -> str:
    # The failing command's stderr is indented under "stderr:"; its last line says why.
    why = [line.strip() for line in lines[at + 1 : at + 16] if line.startswith("    ")]
    return f"pre-commit: cannot set up its hooks ({why[-1] if why else m['error']})"


TOOLS = (
    Tool(
        name="pre-commit",
        faults=(Fault(r"^An unexpected error has occurred: (?P<error>\w+: .+)$", _setup),),
    ),
)
