"""Draw a graph: mermaid in the seed diagram's style, or JSON.

Shapes by kind: script ``{decision}``, approval ``{{hexagon}}``, stage
``[box]`` (``[[subroutine]]`` for agent stages), input ``[/parallelogram/]``,
end ``([stadium])``; each node shows its id and a kind line; route edges
carry their labels and fallback (fault) edges are dotted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stepkit.graph.model import Graph
from stepkit.graph.nodes import ApprovalNode, Edge, EndNode, Node, StageNode

TAKEN_STYLE = "fill:#e3f2e1,stroke:#2e7d32,stroke-width:2px"
TAKEN_LINK = "stroke:#2e7d32,stroke-width:3px"


def render_mermaid(
    graph: Graph,
    highlight_path: Iterable[str] | None = None,
    highlight_edges: Iterable[Iterable[str]] | None = None,
) -> str:
    """The graph as a mermaid ``flowchart TD``.

    :param highlight_path: node ids a run visited (styled with ``classDef``).
    :param highlight_edges: ``(from, to)`` or ``(from, to, route)`` edges a run
        took (styled with ``linkStyle``); a route picks between parallel edges.
    """
    lines = ["flowchart TD"]
    links: list[Edge] = []
    for node in graph.nodes.values():
        if node.kind == "end":
            continue
        edges = node.edges()
        if edges and edges[0].key == "next" and not edges[0].label:
            lines.append(f"    {_declare(node)} --> {edges[0].to}")
            links.append(edges[0])
            edges = edges[1:]
        else:
            lines.append(f"    {_declare(node)}")
        for edge in edges:
            lines.append(f"    {_link(edge)}")
            links.append(edge)
    lines.append("")
    lines.extend(f"    {_declare(node)}" for node in graph.nodes.values() if node.kind == "end")
    path = [n for n in dict.fromkeys(highlight_path or []) if n in graph.nodes]
    if path:
        lines.append("")
        lines.append(f"    classDef taken {TAKEN_STYLE}")
        lines.append(f"    class {','.join(path)} taken")
    taken = _taken_links(links, highlight_edges or [])
    if taken:
        if not path:
            lines.append("")
        lines.append(f"    linkStyle {','.join(map(str, taken))} {TAKEN_LINK}")
    return "\n".join(lines) + "\n"


def render_json(graph: Graph) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [{"from", "to", "label", "fault"}]}``."""
    nodes = []
    for node in graph.nodes.values():
        entry: dict[str, Any] = {
            "id": node.id,
            "kind": node.kind,
            "label": kind_line(node),
            "description": node.description,
        }
        for field in ("call", "stage", "sentinel", "exit_code", "render"):
            value = getattr(node, field, None)  # each kind has some of them
            if value is not None:
                entry[field] = value
        if isinstance(node, EndNode) and node.when:
            entry["when"] = {key: ending.sentinel for key, ending in node.when.items()}
        if isinstance(node, ApprovalNode) and node.options:
            entry["options"] = node.options
        if isinstance(node, StageNode):
            entry["agent"] = node.agent
        nodes.append(entry)
    edges = [
        {"from": e.source, "to": e.to, "label": e.label, "fault": e.fault} for e in graph.edges()
    ]
    return {"name": graph.name, "start": graph.start, "nodes": nodes, "edges": edges}


def kind_line(node: Node) -> str:
    """The second line of a node's box: its label, the sentinel, or the kind."""
    if node.label:
        return node.label
    if isinstance(node, EndNode):
        return node.sentinel
    return node.kind


def _declare(node: Node) -> str:
    text = _text(f"{node.id}\n{kind_line(node)}")
    if node.kind == "script":
        return f'{node.id}{{"{text}"}}'
    if node.kind == "approval":
        return f'{node.id}{{{{"{text}"}}}}'
    if node.kind == "input":
        return f'{node.id}[/"{text}"/]'
    if node.kind == "end":
        return f'{node.id}(["{text}"])'
    if isinstance(node, StageNode) and node.agent:
        return f'{node.id}[["{text}"]]'
    return f'{node.id}["{text}"]'


def _link(edge: Edge) -> str:
    label = _text(edge.label)
    if edge.fault:
        return (
            f'{edge.source} -. "{label}" .-> {edge.to}'
            if label
            else f"{edge.source} -.-> {edge.to}"
        )
    return f'{edge.source} -->|"{label}"| {edge.to}' if label else f"{edge.source} --> {edge.to}"


def _text(text: str) -> str:
    return text.replace('"', "#quot;").replace("\n", "<br/>")


def _taken_links(links: list[Edge], taken: Iterable[Iterable[str]]) -> list[int]:
    wanted = [tuple(t) for t in taken]
    indexes = set()
    for item in wanted:
        source, target = item[0], item[1]
        route = item[2] if len(item) > 2 else None
        candidates = [i for i, e in enumerate(links) if e.source == source and e.to == target]
        exact = [i for i in candidates if links[i].key == route]
        indexes.update(exact or candidates[:1])
    return sorted(indexes)
