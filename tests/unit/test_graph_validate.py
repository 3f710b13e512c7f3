"""The graph loader and validator: every invalid variant gives one line that
names the node and the field; ``stepkit graph --graph bad.yaml`` exits 2 with it."""

from __future__ import annotations

import pytest
import yaml

from stepkit.cli import main
from stepkit.errors import GraphError
from stepkit.graph.load import parse_graph
from stepkit.graph.model import Graph
from stepkit.graph.nodes import NODE_TYPES, AskNode
from stepkit.graph.templates import render_template, template_keys
from stepkit.protocol.graphs import load_protocol_graph
from tests.support.graph_helpers import END_NODES, write_graph

SCRIPT = {"kind": "script", "call": "tests.support.graph_helpers:go", "next": "end_success"}


def graph_text(nodes: dict, **settings) -> str:
    data = {
        "start": next(iter(nodes)),
        "initial_state": {"count": 0},
        **settings,
        "nodes": {**nodes, **{k: v for k, v in END_NODES.items() if k not in nodes}},
    }
    return yaml.safe_dump(data, sort_keys=False)


def error_of(text: str) -> str:
    with pytest.raises(GraphError) as info:
        parse_graph(text, "bad.yaml")
    return str(info.value)


def test_builtin_step_runner_graph_is_valid():
    graph = load_protocol_graph()
    assert graph.start == "resolve_step"
    assert graph.failure_node == "end_failure"
    assert graph.max_loop_iterations == 20 and graph.timeout == 7200
    assert graph.initial_state["max_fix_attempts"] == 2
    assert graph.initial_state["max_review_attempts"] == 1
    assert graph.nodes["implement"].rerun_on_resume is False
    assert graph.nodes["implement"].max_attempts is None
    assert graph.nodes["independent_review"].max_attempts == 2
    assert {n.id for n in graph.nodes.values() if isinstance(n, AskNode) and n.pre_answer} == {
        "gate_blocked",
        "gate_deviation",
    }
    assert {n.sentinel: n.exit_code for n in graph.nodes.values() if n.kind == "end"} == {
        "STEP_COMPLETE": 0,
        "STEP_FAILED": 1,
        "STEP_BLOCKED": 3,
        "STEP_REJECTED": 4,
    }


def test_each_node_is_its_kinds_model_and_round_trips_through_the_union():
    graph = load_protocol_graph()
    assert {type(n) for n in graph.nodes.values()} == set(NODE_TYPES.values())
    assert all(type(n) is NODE_TYPES[n.kind] for n in graph.nodes.values())
    again = Graph.model_validate(graph.model_dump())
    assert [type(n) for n in again.nodes.values()] == [type(n) for n in graph.nodes.values()]
    assert again.edges() == graph.edges()


@pytest.mark.parametrize(
    ("nodes", "settings", "expected"),
    [
        pytest.param(
            {
                "verify_build": {
                    **SCRIPT,
                    "next": None,
                    "routes": {"pass": "end_success", "fail": "nowhere"},
                }
            },
            {},
            "graph bad.yaml: node 'verify_build' routes.fail: unknown target 'nowhere'",
            id="unknown-route-target",
        ),
        pytest.param(
            {"a": {**SCRIPT, "next": "b"}},
            {},
            "graph bad.yaml: node 'a' next: unknown target 'b'",
            id="unknown-next",
        ),
        pytest.param(
            {"a": {**SCRIPT, "fallback": "gone"}},
            {},
            "graph bad.yaml: node 'a' fallback: unknown target 'gone'",
            id="unknown-fallback",
        ),
        pytest.param(
            {"a": {"kind": "robot", "next": "end_success"}},
            {},
            "graph bad.yaml: node 'a' kind: unknown kind 'robot' (expected one of script, stage, approval, input, end)",
            id="unknown-kind",
        ),
        pytest.param(
            {"a": {"call": "tests.support.graph_helpers:go", "next": "end_success"}},
            {},
            "graph bad.yaml: node 'a' kind: missing (one of script, stage, approval, input, end)",
            id="missing-kind",
        ),
        pytest.param(
            {"a": {"kind": "script", "next": "end_success"}},
            {},
            "graph bad.yaml: node 'a' call: missing (required for script nodes)",
            id="script-without-call",
        ),
        pytest.param(
            {"a": {"kind": "stage", "next": "end_success"}},
            {},
            "graph bad.yaml: node 'a' stage: missing (required for stage nodes)",
            id="stage-without-stage",
        ),
        pytest.param(
            {"a": {"kind": "script", "call": "tests.support.graph_helpers:go"}},
            {},
            "graph bad.yaml: node 'a' next: missing (a script node needs next or routes)",
            id="no-next",
        ),
        pytest.param(
            {"a": {"kind": "approval", "options": ["yes"], "routes": {"yes": "end_success"}}},
            {},
            "graph bad.yaml: node 'a' question: missing (required for approval nodes)",
            id="approval-without-question",
        ),
        pytest.param(
            {
                "a": {
                    "kind": "approval",
                    "question": "ok?",
                    "options": ["yes", "no"],
                    "routes": {"yes": "end_success"},
                }
            },
            {},
            "graph bad.yaml: node 'a' routes: no route for option 'no'",
            id="option-without-route",
        ),
        pytest.param(
            {"a": {"kind": "input", "question": "why?", "next": "end_success"}},
            {},
            "graph bad.yaml: node 'a' key: missing (required for input nodes)",
            id="input-without-key",
        ),
        pytest.param(
            {"a": SCRIPT, "end_success": {"kind": "end", "exit_code": 0, "output": "x"}},
            {},
            "graph bad.yaml: node 'end_success' sentinel: missing (required for end nodes)",
            id="end-without-sentinel",
        ),
        pytest.param(
            {"a": SCRIPT, "end_success": {"kind": "end", "sentinel": "OK", "exit_code": 0}},
            {},
            "graph bad.yaml: node 'end_success' output: missing (an end node needs output or render)",
            id="end-without-output",
        ),
        pytest.param(
            {
                "a": SCRIPT,
                "end_failure": {
                    **END_NODES["end_failure"],
                    "when": {"colour": {"sentinel": "X", "exit_code": 4, "output": "X"}},
                },
            },
            {},
            "graph bad.yaml: node 'end_failure' when.colour: no node sets 'colour' (list it in a node's outputs)",
            id="when-key-nobody-sets",
        ),
        pytest.param(
            {
                "a": SCRIPT,
                "end_failure": {
                    **END_NODES["end_failure"],
                    "when": {"count": {"sentinel": "X", "exit_code": 4}},
                },
            },
            {},
            "graph bad.yaml: node 'end_failure' when.count.output: missing (an end node needs output or render)",
            id="when-without-output",
        ),
        pytest.param(
            {
                "a": SCRIPT,
                "end_failure": {
                    **END_NODES["end_failure"],
                    "when": {"count": {"sentinel": "X", "output": "X"}},
                },
            },
            {},
            "graph bad.yaml: node 'end_failure' when.count.exit_code: missing",
            id="when-without-exit-code",
        ),
        pytest.param(
            {
                "a": SCRIPT,
                "end_failure": {
                    **END_NODES["end_failure"],
                    "when": {"count": {"sentinel": "X", "exit_code": 4, "output": "{hue}"}},
                },
            },
            {},
            "graph bad.yaml: node 'end_failure' when.count.output: unknown key 'hue' (not in initial_state or any node's outputs)",
            id="when-unknown-template-key",
        ),
        pytest.param(
            {
                "a": SCRIPT,
                "end_failure": {
                    **END_NODES["end_failure"],
                    "when": {
                        "count": {
                            "sentinel": "X",
                            "exit_code": 4,
                            "render": "tests.support.graph_helpers:nope",
                        }
                    },
                },
            },
            {},
            "graph bad.yaml: node 'end_failure' when.count.render: cannot import 'tests.support.graph_helpers:nope' (module 'tests.support.graph_helpers' has no 'nope')",
            id="when-unimportable-render",
        ),
        pytest.param(
            {"a": {**SCRIPT, "when": {}}},
            {},
            "graph bad.yaml: node 'a' when: not a field of script nodes",
            id="when-on-a-script",
        ),
        pytest.param(
            {"a": {**SCRIPT, "question": "why?"}},
            {},
            "graph bad.yaml: node 'a' question: not a field of script nodes",
            id="field-of-another-kind",
        ),
        pytest.param(
            {"a": {**SCRIPT, "colour": "red"}},
            {},
            "graph bad.yaml: node 'a' colour: unknown field",
            id="unknown-field",
        ),
        pytest.param(
            {"a": {**SCRIPT, "timeout": "soon"}},
            {},
            "graph bad.yaml: node 'a' timeout: Input should be a valid number, unable to parse string as a number",
            id="wrong-type",
        ),
        pytest.param(
            {"a": {**SCRIPT, "call": "no_such_module_xyz:go"}},
            {},
            "graph bad.yaml: node 'a' call: cannot import 'no_such_module_xyz:go' (ModuleNotFoundError: No module named 'no_such_module_xyz')",
            id="unimportable-module",
        ),
        pytest.param(
            {"a": {**SCRIPT, "call": "tests.support.graph_helpers:nothing_here"}},
            {},
            "graph bad.yaml: node 'a' call: cannot import 'tests.support.graph_helpers:nothing_here' (module 'tests.support.graph_helpers' has no 'nothing_here')",
            id="unimportable-function",
        ),
        pytest.param(
            {"a": {**SCRIPT, "call": "graph_helpers.go"}},
            {},
            "graph bad.yaml: node 'a' call: 'graph_helpers.go' is not 'module:function'",
            id="bad-callable-spec",
        ),
        pytest.param(
            {"a": SCRIPT, "lonely": SCRIPT},
            {},
            "graph bad.yaml: node 'lonely': unreachable from start 'a'",
            id="unreachable",
        ),
        pytest.param(
            {
                "a": {**SCRIPT, "next": None, "routes": {"x": "end_success", "y": "b"}},
                "b": {**SCRIPT, "next": "c"},
                "c": {**SCRIPT, "next": "b"},
            },
            {},
            "graph bad.yaml: node 'b': cannot reach an end node (and 1 more)",
            id="cannot-reach-end",
        ),
        pytest.param(
            {
                "a": {
                    "kind": "approval",
                    "question": "Go on with {colour}?",
                    "options": ["yes"],
                    "routes": {"yes": "end_success"},
                }
            },
            {},
            "graph bad.yaml: node 'a' question: unknown key 'colour' (not in initial_state or any node's outputs)",
            id="unknown-template-key",
        ),
        pytest.param(
            {"a": SCRIPT, "end_success": {**END_NODES["end_success"], "output": "{0} done"}},
            {},
            "graph bad.yaml: node 'end_success' output: bad template: '{0}' names no state key",
            id="positional-template",
        ),
        pytest.param(
            {"a": SCRIPT},
            {"start": "nowhere"},
            "graph bad.yaml: start: unknown node 'nowhere'",
            id="unknown-start",
        ),
        pytest.param(
            {"a": SCRIPT},
            {"failure_node": "a"},
            "graph bad.yaml: failure_node: 'a' is a script node, not an end node",
            id="failure-node-not-end",
        ),
        pytest.param(
            {"a": SCRIPT},
            {"max_loop_iterations": 0},
            "graph bad.yaml: max_loop_iterations: Input should be greater than or equal to 1",
            id="bad-setting",
        ),
        pytest.param(
            {"a": SCRIPT},
            {"retries": 3},
            "graph bad.yaml: retries: unknown field",
            id="unknown-setting",
        ),
        pytest.param(
            {"end": SCRIPT},
            {},
            "graph bad.yaml: node 'end': 'end' is a reserved word in mermaid; pick another id",
            id="reserved-id",
        ),
        pytest.param(
            {
                "a": {
                    "kind": "approval",
                    "question": "ok?",
                    "options": ["yes"],
                    "routes": {"yes": "end_success"},
                    "other_as": "maybe",
                }
            },
            {},
            "graph bad.yaml: node 'a' other_as: 'maybe' is not one of the options",
            id="other-as-not-option",
        ),
        pytest.param(
            {
                "a": {
                    "kind": "approval",
                    "question": "ok?",
                    "options": ["yes", "no"],
                    "routes": {"yes": "end_success", "no": "end_success"},
                    "aliases": {"yes": ["y", "No"]},
                }
            },
            {},
            "graph bad.yaml: node 'a' aliases: 'no' is an option or listed twice",
            id="alias-is-an-option",
        ),
        pytest.param(
            {
                "a": {
                    "kind": "approval",
                    "question": "ok?",
                    "options": ["yes", "no"],
                    "routes": {"yes": "end_success", "no": "end_success"},
                    "aliases": {"yes": ["y"]},
                    "views": {"Y": "a text"},
                }
            },
            {},
            "graph bad.yaml: node 'a' views: 'Y' is an option or an alias (a view is never an answer)",
            id="view-is-an-alias",
        ),
        pytest.param(
            {
                "a": {
                    "kind": "approval",
                    "question": "ok?",
                    "options": ["yes"],
                    "routes": {"yes": "end_success"},
                    "views": {"diff": "{no_such_key}"},
                }
            },
            {},
            "graph bad.yaml: node 'a' views.diff: unknown key 'no_such_key' "
            "(not in initial_state or any node's outputs)",
            id="view-of-an-unknown-key",
        ),
        pytest.param(
            {"a": {**SCRIPT, "edge_labels": {"sideways": "x"}}},
            {},
            "graph bad.yaml: node 'a' edge_labels.sideways: no such edge",
            id="label-of-no-edge",
        ),
    ],
)
def test_invalid_graph_gives_one_line_naming_node_and_field(nodes, settings, expected):
    assert error_of(graph_text(nodes, **settings)) == expected


def test_no_end_node():
    text = yaml.safe_dump(
        {"start": "a", "failure_node": "a", "nodes": {"a": {**SCRIPT, "next": "a"}}}
    )
    assert error_of(text) == "graph bad.yaml: nodes: no end node (kind: end) (and 1 more)"


def test_not_yaml_and_not_a_graph():
    assert error_of("nodes: [unclosed").startswith("graph bad.yaml: not valid YAML:")
    assert error_of("- a\n- b\n") == "graph bad.yaml: expected a mapping with 'start' and 'nodes'"
    assert error_of("start: a\n") == "graph bad.yaml: nodes: missing (a mapping of node id to node)"


def test_template_keys_from_outputs_answers_and_engine_records_are_known():
    nodes = {
        "a": {**SCRIPT, "next": "b", "outputs": ["colour"]},
        "b": {"kind": "input", "question": "Why {colour}?", "key": "why", "next": "c"},
        "c": {
            "kind": "approval",
            "question": "{why} / {b_answer} / {a_fault} / {failure_reason} / {prompt}",
            "options": ["ok"],
            "routes": {"ok": "end_success"},
        },
    }
    graph = parse_graph(graph_text(nodes), "ok.yaml")
    assert list(graph.nodes)[:3] == ["a", "b", "c"]


def test_template_rendering_lists_none_and_gate_records():
    assert template_keys("{a} and {b.c} and {d[0]}") == ["a", "b", "d"]
    text = render_template(
        "{x}|{y}|{z}|{gates}",
        {
            "x": ["one", "two"],
            "y": None,
            "gates": [
                {
                    "name": "tests",
                    "status": "fail",
                    "command": "pytest",
                    "exit_code": 1,
                    "summary": "1 failed",
                }
            ],
        },
    )
    assert text == "- one\n- two|(none)|(none)|- tests: FAIL (`pytest`, exit 1, 0.0s) — 1 failed"


def test_cli_graph_with_bad_file_exits_2_with_the_line(tmp_path, capsys):
    bad = write_graph(
        tmp_path,
        {
            "verify_build": {
                "kind": "script",
                "call": "tests.support.graph_helpers:go",
                "routes": {"pass": "end_success", "fail": "nowhere"},
            }
        },
        name="bad.yaml",
    )
    assert main(["graph", "--graph", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"stepkit: error: graph {bad}: node 'verify_build' routes.fail: unknown target 'nowhere'"
    ]


def test_cli_graph_with_missing_file_exits_2(tmp_path, capsys):
    assert main(["graph", "--graph", str(tmp_path / "none.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_step_runner_sentinels_are_its_graphs():
    from stepkit.protocol import SENTINELS
    from stepkit.protocol.graphs import load_protocol_graph

    assert load_protocol_graph().sentinels() == SENTINELS
