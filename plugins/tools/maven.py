"""Maven: a repository it cannot reach, an artifact it lacks offline."""

from __future__ import annotations

import re

from stepkit.workspace.tools import Fault, Tool


def _transfer(m: re.Match[str], lines: list[str], at: int) -> str:
    why = re.search(
        r"(Unknown host [^:\s]+|Connection refused|Connect timed out|Network is unreachable"
        r"|No route to host|Read timed out)",
        m["why"],
    )
    return f"maven: repository {m['repo']} ({m['url']}) unreachable ({why.group(1) if why else m['why'][:80]})"


TOOLS = (
    Tool(
        name="maven",
        faults=(
            Fault(
                r"Could not transfer artifact \S+ from/to (?P<repo>\S+) \((?P<url>[^)]+)\): (?P<why>.+?)(?: -> \[Help \d+\])?$",
                _transfer,
            ),
            Fault(
                r"Cannot access (?P<repo>\S+) \((?P<url>[^)]+)\) in offline mode and the artifact (?P<art>\S+) "
                r"has not been downloaded from it before",
                lambda m, _lines, _at: (
                    f"maven: offline and {m['art']} is not in the local repository"
                ),
            ),
        ),
    ),
)
