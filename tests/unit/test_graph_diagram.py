"""The drawn graph against the seed diagram (tests/graph_seed_diagram.mmd is
the mermaid block of the seed README, verbatim), the JSON form, docs/protocol.md's
copy, and ``--run`` highlighting."""

from __future__ import annotations

import json
import re
from pathlib import Path

from stepkit.api import run_step
from stepkit.cli import main
from stepkit.graph.diagram import render_json, render_mermaid
from stepkit.pluginmanager import get_plugin_manager
from stepkit.protocol.graphs import load_protocol_graph
from tests.support.graph_helpers import write_graph

ROOT = Path(__file__).resolve().parents[2]
SEED = (ROOT / "tests" / "support" / "graph_seed_diagram.mmd").read_text(encoding="utf-8")
_DECL = re.compile(
    r'^\s*(\w+)(\{\{".*?"\}\}|\{".*?"\}|\[\[".*?"\]\]|\[/".*?"/\]|\(\[".*?"\]\)|\[".*?"\])'
)
_LABEL = re.compile(r'-->\|"(.*?)"\||-\. "(.*?)" \.->')


def parse(mermaid: str) -> tuple[list[tuple[str, str, str, bool]], dict[str, str]]:
    """(edges as (from, to, label, dotted), declarations by node id)."""
    edges, decls = [], {}
    for line in mermaid.splitlines():
        decl = _DECL.match(line)
        if decl:
            decls[decl.group(1)] = decl.group(0).strip()
        if "-->" not in line and ".->" not in line:
            continue
        source = re.match(r"\s*(\w+)", line).group(1)
        target = re.search(r"(\w+)\s*$", line).group(1)
        label = _LABEL.search(line)
        text = (label.group(1) or label.group(2)) if label else ""
        edges.append((source, target, text, "-." in line))
    return edges, decls


#: Edges the protocol adds to the seed on purpose: reject at the final approval ends STEP_REJECTED.
IMPROVEMENTS = {("gate_user_review", "end_rejected")}


def test_every_seed_edge_is_drawn_and_every_other_edge_goes_to_end_failure():
    seed_edges, _ = parse(SEED)
    drawn_edges, _ = parse(render_mermaid(load_protocol_graph()))
    seed_pairs = {(s, t) for s, t, _, _ in seed_edges}
    drawn_pairs = {(s, t) for s, t, _, _ in drawn_edges}
    assert len(seed_edges) == 41 and len(seed_pairs) == 40
    assert seed_pairs - drawn_pairs == set()
    assert IMPROVEMENTS <= drawn_pairs
    extra = drawn_pairs - seed_pairs - IMPROVEMENTS
    assert {t for _, t in extra} == {"end_failure"}
    assert {s for s, _ in extra} == {
        "resolve_step",
        "check_handoff",
        "verify_format_lint",
        "verify_build",
        "verify_tests",
    }


def test_seed_labels_dotted_fault_edges_and_node_shapes_are_kept():
    seed_edges, seed_decls = parse(SEED)
    drawn_edges, drawn_decls = parse(render_mermaid(load_protocol_graph()))
    assert set(seed_edges) <= set(drawn_edges)  # same label, same dotted/solid
    assert seed_decls == {k: v for k, v in drawn_decls.items() if k in seed_decls}
    assert set(drawn_decls) == set(seed_decls)


def test_readme_workflow_diagram_is_the_rendered_graph():
    readme = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```mermaid\n(.*?)```", readme, flags=re.DOTALL)
    assert render_mermaid(load_protocol_graph()) in blocks, (
        "regenerate the diagram in docs/protocol.md with: stepkit graph"
    )


def test_json_format_lists_nodes_and_edges(capsys):
    assert main(["graph", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == render_json(load_protocol_graph())
    assert len(data["nodes"]) == 25
    assert {
        "from": "implement",
        "to": "end_failure",
        "label": "coder crashed\n(no retries)",
        "fault": True,
    } in data["edges"]
    assert {"from": "gate_blocked", "to": "end_blocked", "label": "no", "fault": False} in data[
        "edges"
    ]
    assert all(set(e) == {"from", "to", "label", "fault"} for e in data["edges"])
    failure = next(n for n in data["nodes"] if n["id"] == "end_failure")
    assert failure["sentinel"] == "STEP_FAILED" and failure["when"] == {
        "rejected_at": "STEP_REJECTED"
    }
    implement = next(n for n in data["nodes"] if n["id"] == "implement")
    assert (
        implement["kind"] == "stage"
        and implement["agent"] is True
        and implement["stage"] == "implement"
    )


def test_run_highlights_the_path_it_took(tmp_path, capsys):
    project = tmp_path / "project"
    project.mkdir()
    graph = write_graph(
        project,
        {
            "first": {
                "kind": "script",
                "call": "tests.support.graph_helpers:loop_until",
                "routes": {"again": "first", "done": "second"},
            },
            "second": {
                "kind": "script",
                "call": "tests.support.graph_helpers:go",
                "next": "end_success",
                "fallback": "end_failure",
            },
        },
    )
    result = run_step(
        project_dir=project, graph=graph, sets={"stop_at": 2}, pm=get_plugin_manager(builtins=[])
    )
    assert result.exit_code == 0
    assert main(["graph", "--run", result.run_id, "--project-dir", str(project)]) == 0
    out = capsys.readouterr().out
    assert "    class first,second,end_success taken" in out
    links = [line.strip() for line in out.splitlines() if "-->" in line or ".->" in line]
    style = re.search(r"linkStyle ([\d,]+) stroke", out).group(1)
    taken = [links[int(i)] for i in style.split(",")]
    assert taken == [
        'first -->|"again"| first',
        'first -->|"done"| second',
        'second{"second<br/>script"} --> end_success',
    ]
    assert main(["graph", "--run", "nope", "--project-dir", str(project)]) == 2
    capsys.readouterr()
    assert main(["graph", "--run", result.run_id, "--project-dir", str(project / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
