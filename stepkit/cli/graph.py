"""``stepkit graph [--graph FILE] [--run RUN_ID] [--format mermaid|json]``.

Draws the step-runner graph (or a graph file) after validating it: an
invalid file exits 2 with the one-line error.  ``--run`` highlights the
nodes and edges a run took (its graph is used unless ``--graph`` is given).
"""

from __future__ import annotations

import argparse
import json

from stepkit.engine.runstore import RunStore
from stepkit.graph.diagram import render_json, render_mermaid
from stepkit.protocol.graphs import BUILTIN, load_protocol_graph


def run(args: argparse.Namespace) -> int:
    path, edges = None, None
    graph_file = args.graph
    if args.run_id:
        from stepkit.config import resolve_project_dir

        checkpoint = RunStore(resolve_project_dir(args.project_dir)).open(args.run_id).load()
        path, edges = checkpoint.path, checkpoint.edges
        if graph_file is None and checkpoint.graph != BUILTIN:
            graph_file = checkpoint.graph
    graph = load_protocol_graph(graph_file)
    if args.format == "json":
        data = render_json(graph)
        if args.run_id:
            data["run"] = {"run_id": args.run_id, "path": path, "edges": edges}
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(render_mermaid(graph, highlight_path=path, highlight_edges=edges), end="")
    return 0
