"""corepack (sources/Engine.ts, sources/corepackUtils.ts): another package
manager than the project's was run, or the project's cannot be downloaded."""

from stepkit.workspace.tools import Fault, Tool

TOOLS = (
    Tool(
        name="corepack",
        faults=(
            Fault(
                r"^(?:Usage Error: )?This project is configured to use (?P<pm>\w+) because (?P<file>\S+) has a "
                r'"packageManager" field$',
                lambda m, _lines, _at: (
                    f"corepack: the project's packageManager is {m['pm']} ({m['file']}); another "
                    "package manager was run"
                ),
            ),
            Fault(
                r"^(?:Internal Error: )?(?:Network access disabled by the environment; can't reach|Error when "
                r"performing the request to) (?P<url>\S+?)(?:;.*)?$",
                lambda m, _lines, _at: (
                    f"corepack: cannot download the project's package manager ({m['url']})"
                ),
            ),
        ),
    ),
)
