"""uv: a tool it cannot spawn, the package index it cannot reach, a Python
build it cannot download (``uv venv -p 3.14`` under tox-uv, ``uv python
install``), its lockfile."""

from __future__ import annotations

import re

from stepkit.workspace.tools import Fault, Tool, after


def _spawn(m: re.Match[str], lines: list[str], at: int) -> str:
    # uv 0.13: "error: Failed to spawn: mypy" / "  cause: No such file or directory (os error 2)";
    # older: "error: Failed to spawn: `mypy`" / "  Caused by: No such file or directory (os error 2)"
    denied = after(lines, at, r"(?:Caused by|cause): Permission denied")
    return f"uv: failed to spawn {m['tool']} ({'not executable' if denied else 'not installed'})"


def _network(m: re.Match[str], lines: list[str], at: int) -> str:
    causes = [
        c["why"]
        for line in lines[at + 1 : at + 12]
        if (c := re.match(r"^\s*(?:Caused by|cause): (?P<why>.+)$", line))
    ]
    url = next(
        (
            u["url"]
            for why in causes
            if (
                u := re.search(r"(?:Failed to fetch:|for url) `?\(?(?P<url>https?://[^`)\s]+)", why)
            )
        ),
        "",
    )
    where = f" at {url}" if url else ""
    why = causes[-1] if causes else m.group(0)
    # the line and its causes, however uv wrapped them to the terminal's width
    python = re.search(r"\bcpython-(?P<version>\d+\.\d+\.\d+)", " ".join(lines[at : at + 12]))
    if python:
        return f"uv: could not download Python {python['version']}{where} ({why})"
    return f"uv: package index unreachable{where} ({why})"


TOOLS = (
    Tool(
        name="uv",
        before=("python",),
        faults=(
            Fault(r"^error: Failed to spawn: `?(?P<tool>[^`\s]+)`?$", _spawn),
            Fault(
                r"^error: (?:Request failed after \d+ retries|Failed to fetch|Failed to download"
                r"|Failed to install cpython-)",
                _network,
            ),
        ),
        lockfiles=("uv.lock",),
    ),
)
