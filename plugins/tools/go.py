"""go: the module proxy it cannot reach, its checksum files."""

from stepkit.workspace.tools import Fault, Tool

TOOLS = (
    Tool(
        name="go",
        faults=(
            Fault(
                r"dial tcp(?: [^:\s]+:\d+)?: (?P<why>lookup \S+(?: on \S+)?: no such host"
                r"|connect: (?:connection refused|network is unreachable)|i/o timeout)",
                lambda m, lines, _at: (
                    f"go: module proxy unreachable ({m['why']})"
                    if any(line.startswith("go: ") for line in lines)
                    else None
                ),
            ),
        ),
        lockfiles=("go.sum", "go.work.sum"),
        caches=(("GOCACHE", "cache/go-build"), ("GOMODCACHE", "cache/go-mod")),
    ),
)
