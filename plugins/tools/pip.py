"""pip: the package index it cannot reach."""

from __future__ import annotations

import re

from stepkit.workspace.tools import Fault, Tool


def _network(m: re.Match[str], lines: list[str], at: int) -> str | None:
    # urllib3's retry warning counts only when pip then gave up on the requirement
    if not any(
        re.match(r"^ERROR: (?:Could not find a version|No matching distribution)", line)
        for line in lines
    ):
        return None
    return f"pip: package index unreachable ({m['why'].strip()})"


TOOLS = (
    Tool(
        name="pip",
        faults=(
            Fault(r"Failed to establish a new connection: (?P<why>[^')]+)", _network),
            Fault(
                r"^(?:ERROR: )?Could not fetch URL (?P<url>\S+?):? (?P<why>There was a problem .+)$",
                lambda m, _lines, _at: f"pip: could not fetch {m['url']} ({m['why'][:80]})",
            ),
        ),
        caches=(("PIP_CACHE_DIR", "cache/pip"),),
    ),
)
