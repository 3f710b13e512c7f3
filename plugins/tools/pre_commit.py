"""pre-commit (and prek): it could not set up a hook's environment (clone
its repository, install its dependencies).  pre-commit says so with
"An unexpected error has occurred" and exit 3, prek with "error: Failed to
init hooks" and exit 2, never for a hook's own verdict (a hook that fails
is "Failed" and exit 1): no hook judged the code."""

from __future__ import annotations

import re

from stepkit.workspace.tools import Fault, Tool


def _setup(m: re.Match[str], lines: list[str], at: int) -> str:
    # The failing command's stderr is indented under "stderr:"; its last line says why.
    why = [line.strip() for line in lines[at + 1 : at + 16] if line.startswith("    ")]
    return f"pre-commit: cannot set up its hooks ({why[-1] if why else m['error']})"


def _prek_setup(m: re.Match[str], lines: list[str], at: int) -> str:
    # "  caused by: Failed to clone repo `URL`", then the git command's own stderr under "[stderr]"
    below = [line.strip() for line in lines[at + 1 : at + 16] if line.strip()]
    said = below[below.index("[stderr]") + 1 :] if "[stderr]" in below else []
    causes = [line.removeprefix("caused by: ") for line in below if line.startswith("caused by: ")]
    why = said[-1] if said else causes[-1] if causes else m.group(0)
    return f"prek: cannot set up its hooks ({why})"


TOOLS = (
    Tool(
        name="pre-commit",
        faults=(
            Fault(r"^An unexpected error has occurred: (?P<error>\w+: .+)$", _setup),
            Fault(r"^error: Failed to init hooks$", _prek_setup),
        ),
    ),
)
