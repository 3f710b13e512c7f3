"""Where the step protocol's graph comes from: the built-in step-runner
graph, or a graph file that reuses the same stages and script nodes."""

from __future__ import annotations

from pathlib import Path

from stepkit.graph.load import load_graph
from stepkit.graph.model import Graph

STEP_RUNNER = Path(__file__).with_name("step_runner.yaml")
#: How checkpoints name the built-in graph (they name any other by its path).
BUILTIN = "builtin"


def load_protocol_graph(path: str | Path | None = None) -> Graph:
    """The graph file at ``path``, or (None or ``builtin``) the built-in step-runner graph."""
    if path is None or str(path) == BUILTIN:
        return load_graph(STEP_RUNNER, source=BUILTIN)
    return load_graph(path)
