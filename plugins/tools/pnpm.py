"""pnpm: an engine or package manager version the project refuses, a
dependency of its own set-up it cannot fetch (the ``@pnpm/<platform>``
package of the project's ``packageManager`` version it switches to, a
``configDependencies`` entry), its lockfile."""

from stepkit.workspace.tools import Fault, Tool

TOOLS = (
    Tool(
        name="pnpm",
        faults=(
            Fault(
                r"\bERR_PNPM_(?P<code>UNSUPPORTED_ENGINE|BAD_PM_VERSION)\b\s*(?P<why>.*)$",
                lambda m, _lines, _at: (
                    f"pnpm: {m['code'].lower().replace('_', ' ')} ({m['why'].strip() or m['code']})"
                ),
            ),
            Fault(
                r"\bFailed to resolve config dependency (?P<dep>\S+?): (?P<why>.*)$",
                lambda m, _lines, _at: (
                    f"pnpm: could not fetch its config dependency {m['dep']} ({m['why'].strip()})"
                ),
            ),
        ),
        lockfiles=("pnpm-lock.yaml",),
    ),
)
