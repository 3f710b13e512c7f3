"""Python: a tool run as a module of the project's environment (``uv run
python -m mypy``, as every Python environment manager's tools are run)
that the environment lacks."""

from __future__ import annotations

import re

from stepkit.workspace.tools import Fault, Tool


def _no_module(m: re.Match[str], lines: list[str], at: int) -> str:
    # `python -m TOOL` in the project's environment (uv, poetry, pdm, hatch or pipenv run), which
    # runs that environment's TOOL or stops here, never the one on PATH
    tool = m["module"]
    return (
        f"{tool} is not installed in the project's environment ({m['python']}: No module named "
        f"{tool}): add it to the project's development dependencies, or set the gate's command "
        "in stepkit.toml [commands]"
    )


TOOLS = (
    Tool(
        name="python",
        before=("poetry",),
        faults=(
            Fault(
                r"^(?P<python>(?:.*/)?python[\d.]*): No module named (?P<module>[\w.]+)$",
                _no_module,
            ),
        ),
    ),
)
