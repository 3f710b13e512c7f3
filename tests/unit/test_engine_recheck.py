"""The engine's ``recheck``: a graph-level function run before a successful
end (and at every resume) that may send the run to another node; a broken
one never lets the run end as a success."""

from __future__ import annotations

from stepkit.api import run_step
from stepkit.pluginmanager import get_plugin_manager
from stepkit.records import Outcome
from tests.support.graph_helpers import write_graph


def once_back(ctx, path):
    """Send the run back to ``first`` once."""
    return None if ctx.state.get("count") else Outcome(route="first", updates={"count": 1})


def broken(ctx, path):
    raise RuntimeError("cannot look at the tree")


def to_nowhere(ctx, path):
    return Outcome(route="nowhere")


def run_with(tmp_path, recheck):
    project = tmp_path / "project"
    project.mkdir(parents=True)
    graph = write_graph(
        project,
        {
            "first": {
                "kind": "script",
                "call": "tests.support.graph_helpers:go",
                "next": "end_success",
            }
        },
        recheck=f"tests.unit.test_engine_recheck:{recheck}",
    )
    return run_step(
        project_dir=project, graph=graph, pm=get_plugin_manager(builtins=["stepkit.plugins.ask"])
    )


def test_a_recheck_sends_the_run_back_before_its_successful_end(tmp_path):
    result = run_with(tmp_path, "once_back")
    assert result.outcome == "STEP_COMPLETE" and result.state["count"] == 1


def test_a_recheck_that_crashes_or_names_no_node_fails_the_run(tmp_path):
    for name, words in (
        ("broken", "crashed: RuntimeError: cannot look at the tree"),
        ("to_nowhere", "'nowhere'"),
    ):
        result = run_with(tmp_path / name, name)
        assert result.outcome == "STEP_FAILED" and result.exit_code == 1
        assert (
            "recheck" in result.state["failure_reason"] and words in result.state["failure_reason"]
        )
