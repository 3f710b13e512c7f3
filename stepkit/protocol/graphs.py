"""Where the step protocol's graph comes from: the built-in step-runner
graph, or a graph file that reuses the same stages and script nodes."""

from __future__ import annotations

from pathlib import Path

from stepkit.graph.load import load_graph
from stepkit.graph.model import Graph
from stepkit.graph.nodes import StageNode

STEP_RUNNER = Path(__file__).with_name("step_runner.yaml")
#: How checkpoints name the built-in graph (they name any other by its path).
BUILTIN = "builtin"


def load_protocol_graph(path: str | Path | None = None) -> Graph:
    """The graph file at ``path``, or (None or ``builtin``) the built-in step-runner graph,
    its stage nodes held to their stages' rules (:func:`_hold_to_stages`)."""
    if path is None or str(path) == BUILTIN:
        return _hold_to_stages(load_graph(STEP_RUNNER, source=BUILTIN))
    return _hold_to_stages(load_graph(path))


def _hold_to_stages(graph: Graph) -> Graph:
    """A stage node whose stage (:data:`~stepkit.protocol.stages.STAGES`) is
    not safe to re-run is not re-run on resume, whatever the file says: a
    graph may be stricter than the stage, never looser.  (A stage name the
    table lacks is left to the stage runner the run was given.)"""
    from stepkit.protocol.stages import STAGES

    for node in graph.nodes.values():
        if not isinstance(node, StageNode):
            continue
        stage = STAGES.get(node.stage)
        if stage is not None and not stage.rerun_on_resume:
            node.rerun_on_resume = False
    return graph
