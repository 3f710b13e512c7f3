"""pub (Dart, Flutter): its lockfile."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="pub",
        lockfiles=("pubspec.lock",),
    ),
)
