"""The graph's ``append`` fields: nodes return only the items they add, the
engine appends them in one place (script and stage Outcomes, approval and
input updates alike), and the loader refuses what would replace the list."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stepkit.api import run_step
from stepkit.errors import GraphError
from stepkit.graph.load import parse_graph
from stepkit.pluginmanager import get_plugin_manager
from tests.support.graph_helpers import END_NODES, stage_runner, write_graph

ASK = {
    "kind": "input",
    "question": "Why?",
    "key": "reason",
    "pre_answer": True,
    "next": "end_success",
    "updates": {"next": {"history": ["asked: {why_answer}"]}},
}


def run(project_dir: Path, nodes: dict, answers: dict | None = None, **settings):
    graph = write_graph(project_dir, nodes, append=["history"], **settings)
    return run_step(
        project_dir=project_dir,
        graph=graph,
        answers=answers,
        pm=get_plugin_manager(builtins=["stepkit.plugins.ask"]),
        stage_runner=stage_runner,
    )


def test_every_node_adds_its_items_to_what_the_list_held(project_dir):
    result = run(
        project_dir,
        {
            "a": {
                "kind": "script",
                "call": "tests.support.graph_helpers:add_history",
                "next": "b",
                "outputs": ["history"],
            },
            "b": {
                "kind": "script",
                "call": "tests.support.graph_helpers:add_history",
                "next": "why",
                "outputs": ["history"],
            },
            "why": ASK,
        },
        answers={"why": "because"},
        initial_state={"history": ["seed"]},
    )
    assert result.exit_code == 0
    assert result.state["history"] == ["seed", "a", "b", "asked: because"]


def test_a_single_value_for_an_append_field_is_a_node_fault(project_dir):
    result = run(
        project_dir,
        {
            "a": {
                "kind": "script",
                "call": "tests.support.graph_helpers:whole_history",
                "next": "end_success",
                "outputs": ["history"],
            }
        },
        initial_state={"history": ["seed"]},
    )
    assert result.exit_code == 1
    assert result.state["failure_reason"] == (
        "node a gave 'history' as a single value; the graph appends "
        "to it, so the node returns a list of the new items"
    )
    assert result.state["history"] == ["seed"]


def test_the_step_runners_revisions_land_in_fix_history(project_dir):
    """revise_from_choice (free text at the approval) and an input's updates
    (get_revision) both add one item to fix_history."""
    nodes = {
        "review": {
            "kind": "approval",
            "question": "Approve?",
            "options": ["approve", "revise"],
            "pre_answer": True,
            "on_other": "revise_from_choice",
            "other_key": "revision_choice",
            "routes": {"approve": "end_success", "revise": "get_revision"},
        },
        "get_revision": {
            "kind": "input",
            "question": "What should change?",
            "key": "fix_instructions",
            "pre_answer": True,
            "next": "end_success",
            "updates": {"next": {"fix_history": ["revision requested: {get_revision_answer}"]}},
        },
        "revise_from_choice": {
            "kind": "script",
            "call": "stepkit.protocol.nodes.routes:revise_from_choice",
            "next": "end_success",
            "outputs": ["fix_instructions", "fix_history"],
        },
    }
    settings = {
        "append": ["fix_history"],
        "initial_state": {"count": 0, "fix_history": ["fix attempt 1"]},
    }
    free = run_step(
        project_dir=project_dir,
        graph=write_graph(project_dir, nodes, **settings),
        answers={"review": "add a docstring"},
        pm=get_plugin_manager(builtins=["stepkit.plugins.ask"]),
    )
    assert free.state["fix_history"] == ["fix attempt 1", "revision requested: add a docstring"]
    typed = run_step(
        project_dir=project_dir,
        graph=write_graph(project_dir, nodes, **settings),
        answers={"review": "revise", "get_revision": "rename it"},
        pm=get_plugin_manager(builtins=["stepkit.plugins.ask"]),
    )
    assert typed.state["fix_history"] == ["fix attempt 1", "revision requested: rename it"]
    assert typed.state["fix_instructions"] == "rename it"


def graph_error(nodes: dict, **settings) -> str:
    data = {
        "start": next(iter(nodes)),
        "initial_state": {"count": 0},
        **settings,
        "nodes": {**nodes, **END_NODES},
    }
    with pytest.raises(GraphError) as info:
        parse_graph(yaml.safe_dump(data, sort_keys=False), "bad.yaml")
    return str(info.value)


SCRIPT = {"kind": "script", "call": "tests.support.graph_helpers:go", "next": "end_success"}


@pytest.mark.parametrize(
    ("nodes", "settings", "expected"),
    [
        pytest.param(
            {"a": SCRIPT},
            {"append": ["history"]},
            "append.history: no node sets 'history' (list it in a node's outputs)",
            id="nobody-sets-it",
        ),
        pytest.param(
            {"a": SCRIPT},
            {"append": ["count"]},
            "append.count: initial_state gives it 0, not a list",
            id="initial-not-a-list",
        ),
        pytest.param(
            {
                "a": {**ASK, "updates": {"next": {"history": "asked"}}},
                "b": {**SCRIPT, "outputs": ["history"]},
            },
            {"append": ["history"]},
            "node 'a' updates.next.history: 'history' is an append field; give a list of new items",
            id="update-not-a-list",
        ),
        pytest.param(
            {"a": {**ASK, "key": "history", "updates": {}}},
            {"append": ["history"]},
            "node 'a' key: 'history' is an append field; an answer cannot replace it",
            id="answer-replaces-it",
        ),
        pytest.param(
            {"a": {**ASK, "updates": {"done": {"x": 1}}}},
            {},
            "node 'a' updates.done: an input node's only route is 'next'",
            id="input-update-route",
        ),
        pytest.param(
            {"a": {**ASK, "updates": {"next": {"history": ["asked {colour}"]}}}},
            {},
            "node 'a' updates.next.history: unknown key 'colour' (not in initial_state or any node's outputs)",
            id="update-template-key",
        ),
    ],
)
def test_append_and_update_problems_give_one_line(nodes, settings, expected):
    assert graph_error(nodes, **settings) == f"graph bad.yaml: {expected}"
