"""What a run settles before a node runs: the installed fingerprint taken
beside the run's start (:func:`~stepkit.workspace.gate_commands.start_fingerprint`)
is in its settings before any node that could change the tools that judge
the step."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

#: The module of the step-runner's routers: they turn state into state and run nothing.
ROUTERS = "stepkit.protocol.nodes.routes"


def tools_settled(
    settings: MutableMapping[str, Any], pm: Any, project_dir: Path
) -> Callable[[Any], None]:
    """What a run calls before each script or stage node (the engine's
    ``before_node``): the installed fingerprint taken beside the run's start
    is in ``settings`` (:func:`~stepkit.workspace.gate_commands.settle_fingerprint`)
    before any node but those that run nothing of the project's and no
    agent: a read-only stage with no delegate (the orientation) and the
    routers.  So it is taken while they run, and is there before the coder,
    a gate or a graph's own node runs."""
    from stepkit.workspace.gate_commands import settle_fingerprint

    def before(node: Any) -> None:
        if not _runs_nothing(node):
            settle_fingerprint(settings, pm, Path(project_dir))

    return before


def _runs_nothing(node: Any) -> bool:
    from stepkit.graph.nodes import ScriptNode, StageNode
    from stepkit.protocol.stages import STAGES

    if isinstance(node, StageNode):
        stage = STAGES.get(node.stage)
        return stage is not None and stage.read_only and stage.delegate is None
    return isinstance(node, ScriptNode) and node.call.split(":", 1)[0] == ROUTERS
