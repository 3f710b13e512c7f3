"""``stepkit graph [--graph FILE] [--run RUN_ID] [--format mermaid|json]``.

Draws the step-runner graph (or a graph file) after validating it: an
invalid file exits 2 with the one-line error.  ``--run`` highlights the
nodes and edges a run took (its graph is used unless ``--graph`` is given).
"""

from __future__ import annotations

import argparse
from typing import Any

from stepkit.engine.runstore import RunStore
from stepkit.graph.diagram import render_json, render_mermaid
from stepkit.protocol.graphs import BUILTIN, load_protocol_graph
from stepkit.shown import shown_json


def run(args: argparse.Namespace) -> int:
    graph, path, edges = run_graph(args.graph, args.run_id, args.project_dir)
    if args.format == "json":
        print(shown_json(graph_json(graph, args.run_id, path, edges)))
    else:
        print(render_mermaid(graph, highlight_path=path, highlight_edges=edges), end="")
    return 0


def run_graph(graph_file: str | None, run_id: str | None, project_dir: str) -> tuple[Any, Any, Any]:
    """The graph to draw and, with ``run_id``, the nodes and edges that run
    took (its graph unless ``graph_file`` is given)."""
    path, edges = None, None
    if run_id:
        from stepkit.config import resolve_project_dir

        checkpoint = RunStore(resolve_project_dir(project_dir)).open(run_id).load()
        path, edges = checkpoint.path, checkpoint.edges
        if graph_file is None and checkpoint.graph != BUILTIN:
            graph_file = checkpoint.graph
    return load_protocol_graph(graph_file), path, edges


def graph_json(graph: Any, run_id: str | None, path: Any, edges: Any) -> dict[str, Any]:
    """``--format json``'s object: the graph, and the run's path when there is one."""
    data = render_json(graph)
    if run_id:
        data["run"] = {"run_id": run_id, "path": path, "edges": edges}
    return data
