"""tsc: the comments that silence it and its configuration (its ``TS2322`` codes read as any upper-case code opening a message)."""

from stepkit.workspace.tools import Tool

TOOLS = (
    Tool(
        name="tsc",
        silencers=(("@ts-ignore/@ts-nocheck", r"@ts-(ignore|nocheck|expect-error)"),),
        configs=(r"tsconfig\.json",),
    ),
)
