"""npm and npx: a package npx cannot run, the registry npm cannot reach,
the project's engines refusing this Node; npm's lockfiles."""

from __future__ import annotations

import re

from stepkit.workspace.tools import Fault, Tool, after


def _network(m: re.Match[str], lines: list[str], at: int) -> str:
    request = after(lines, at, r"network request to (?P<url>\S+) failed, reason: (?P<why>.+)$")
    detail = f"{request['why']}" if request else m["code"]
    return f"npm: registry unreachable ({detail})"


def _engine(m: re.Match[str], lines: list[str], at: int) -> str:
    # npm 10/11: "npm error notsup Required: {"node":">=99"}" / "npm error notsup Actual:   {…}"
    found = {
        k["key"]: k["value"]
        for line in lines[at : at + 12]
        if (
            k := re.match(
                r"^npm (?:error|ERR!) notsup (?P<key>Required|Actual):\s+(?P<value>.+)$", line
            )
        )
    }
    if not found:
        return "npm: unsupported engine (the project's engines refuse this Node or npm)"
    return f"npm: the project's engines need {found.get('Required', '?')}; this machine has {found.get('Actual', '?')}"


TOOLS = (
    Tool(
        name="npm",
        faults=(
            Fault(
                r"^npm (?:error|ERR!) could not determine executable to run$",
                lambda m, _lines, _at: (
                    "npx: could not determine executable to run (the package is not installed or has no such command)"
                ),
            ),
            Fault(
                r"^npm (?:error|ERR!) npx canceled due to missing packages and no YES option: \[(?P<pkgs>.*)\]$",
                lambda m, _lines, _at: f"npx: {m['pkgs'].replace(chr(34), '')} not installed",
            ),
            Fault(
                r"^npm (?:error|ERR!) code (?P<code>ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT"
                r"|ENETUNREACH|EHOSTUNREACH)$",
                _network,
            ),
            Fault(r"^npm (?:error|ERR!) code EBADENGINE$", _engine),
        ),
        lockfiles=("package-lock.json", "npm-shrinkwrap.json"),
        caches=(("npm_config_cache", "cache/npm"),),
    ),
)
