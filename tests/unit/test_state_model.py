"""The typed state: the step-runner's YAML and code agree with its model
(:class:`stepkit.protocol.state.StepState`), the graph validator holds a
graph to the model it names, and the engine refuses, as a node fault, an
update the model does not take."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pytest
import yaml
from pydantic import ConfigDict, Field

import stepkit
from stepkit.api import run_step
from stepkit.errors import GraphError
from stepkit.graph.load import parse_graph
from stepkit.graph.state import APPEND, ENGINE_KEYS, RunState, append_fields, has_key
from stepkit.pluginmanager import get_plugin_manager
from stepkit.protocol import graphs
from stepkit.protocol.graphs import load_protocol_graph
from stepkit.protocol.state import StepState, step_state
from stepkit.records import GateResult, StageContext
from tests.support.graph_helpers import END_NODES

STEP_RUNNER = yaml.safe_load(
    resources.files("stepkit.protocol").joinpath("step_runner.yaml").read_text()
)
NODE_IDS = set(STEP_RUNNER["nodes"])


def keys_the_yaml_writes() -> set[tuple[str, str]]:
    """(where, key) for every key the step-runner's YAML names, read from the file itself."""
    found = {("initial_state", key) for key in STEP_RUNNER["initial_state"]}
    found |= {("append", key) for key in STEP_RUNNER["append"]}
    for node_id, node in STEP_RUNNER["nodes"].items():
        found |= {(f"{node_id}.outputs", key) for key in node.get("outputs", [])}
        found |= {
            (f"{node_id}.updates", key)
            for updates in node.get("updates", {}).values()
            for key in updates
        }
        found |= {
            (f"{node_id}.{field}", node[field]) for field in ("key", "other_key") if field in node
        }
        for field in ("question", "output"):
            found |= {
                (f"{node_id}.{field}", key) for key in re.findall(r"{(\w+)}", node.get(field, ""))
            }
    return found


def test_every_key_the_step_runner_yaml_names_is_in_the_model():
    missing = sorted(
        f"{where}: {key}"
        for where, key in keys_the_yaml_writes()
        if not has_key(StepState, key, NODE_IDS)
    )
    assert missing == []


#: ``state.get("key")`` / ``state["key"]`` (and ``ctx.state…``) in the code
READ = re.compile(r"""state(?:\.get\(|\[)\s*["'](\w+)["']""")


def test_every_key_the_protocol_code_reads_is_in_the_model():
    root = Path(stepkit.__file__).parent
    files = [
        *root.glob("protocol/*.py"),
        *root.glob("plugins/**/*.py"),
        root / "records.py",
        root / "api.py",
    ]
    missing = sorted(
        f"{path.relative_to(root)}: {key}"
        for path in files
        for key in READ.findall(path.read_text(encoding="utf-8"))
        if not has_key(StepState, key, NODE_IDS)
    )
    assert missing == []


def test_the_yaml_append_list_is_the_model_s_append_fields():
    assert set(STEP_RUNNER["append"]) == append_fields(StepState)
    assert load_protocol_graph().state_model is StepState


def test_the_engine_s_own_keys_are_in_every_state():
    assert {"prompt", "usage", "failure_reason", "last_fault_node"} <= set(ENGINE_KEYS)
    assert all(has_key(StepState, key, NODE_IDS) for key in ENGINE_KEYS)
    assert has_key(StepState, "implement_fault", NODE_IDS) and has_key(
        StepState, "gate_user_review_answer", NODE_IDS
    )
    assert not has_key(StepState, "nosuchnode_fault", NODE_IDS)


def test_the_typed_view_reads_gates_as_gate_results():
    view = step_state(
        {"gates": [{"name": "tests", "status": "pass"}], "fix_attempts": 1, "step_x": 3}
    )
    assert (
        isinstance(view.gates[0], GateResult)
        and view.gates[0].status == "pass"
        and view.fix_attempts == 1
    )


# -- the validator ------------------------------------------------------------


class CountState(RunState):
    """A strict model for the graphs below."""

    model_config = ConfigDict(extra="forbid")

    count: int = 0
    calls: dict[str, int] = Field(default_factory=dict)
    stub_updates: dict[str, Any] = Field(default_factory=dict)
    label: str = ""
    history: Annotated[list[str], APPEND] = Field(default_factory=list)


MODEL = "tests.unit.test_state_model:CountState"
SCRIPT = {
    "kind": "script",
    "call": "tests.support.graph_helpers:scripted",
    "next": "end_success",
    "outputs": ["calls", "count", "history"],
}


def graph_text(nodes: dict, **settings: Any) -> str:
    data = {
        "start": next(iter(nodes)),
        "state": MODEL,
        "initial_state": {"count": 0},
        "append": ["history"],
        **settings,
        "nodes": {**nodes, **{k: v for k, v in END_NODES.items() if k not in nodes}},
    }
    return yaml.safe_dump(data, sort_keys=False)


def error_of(text: str) -> str:
    with pytest.raises(GraphError) as info:
        parse_graph(text, "bad.yaml")
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_graph_that_fits_its_model_loads():
    graph = parse_graph(graph_text({"first": SCRIPT}))
    assert graph.state_model.__name__ == "CountState"


@pytest.mark.parametrize(
    ("nodes", "settings", "expected"),
    [
        (
            {"first": {**SCRIPT, "outputs": ["history", "colour"]}},
            {},
            "node 'first' outputs: 'colour' is not a key of the state model CountState",
        ),
        (
            {
                "ask": {
                    "kind": "approval",
                    "question": "ok?",
                    "options": ["yes"],
                    "routes": {"yes": "end_success"},
                    "updates": {"yes": {"colour": "red"}},
                }
            },
            {"append": []},
            "node 'ask' updates.yes.colour: 'colour' is not a key of the state model CountState",
        ),
        (
            {
                "ask": {
                    "kind": "approval",
                    "question": "ok?",
                    "options": ["yes"],
                    "routes": {"yes": "end_success"},
                    "on_other": "end_success",
                    "other_key": "remark",
                }
            },
            {"append": []},
            "node 'ask' other_key: 'remark' is not a key of the state model CountState",
        ),
        (
            {"ask": {"kind": "input", "question": "why?", "key": "reason", "next": "end_success"}},
            {"append": []},
            "node 'ask' key: 'reason' is not a key of the state model CountState",
        ),
        (
            {
                "ask": {
                    "kind": "approval",
                    "question": "ok?",
                    "options": ["yes"],
                    "routes": {"yes": "end_success"},
                    "updates": {"yes": {"count": "lots"}},
                }
            },
            {"append": []},
            "node 'ask' updates.yes.count: 'count'",
        ),
        ({"first": SCRIPT}, {"initial_state": {"count": "none"}}, "initial_state.count: 'count'"),
        (
            {"first": SCRIPT},
            {"initial_state": {"count": 0, "mood": "calm"}},
            "initial_state.mood: 'mood' is not a key of the state (CountState)",
        ),
        (
            {"first": {**SCRIPT, "outputs": ["history", "label"]}},
            {"append": ["history", "label"]},
            "append.label: the state model CountState does not append to 'label'",
        ),
        (
            {"first": SCRIPT},
            {"append": []},
            "append: misses 'history', which the state model CountState appends to",
        ),
        (
            {"first": SCRIPT},
            {"state": "tests.unit.test_state_model:nothing"},
            "state: cannot import",
        ),
        (
            {"first": SCRIPT},
            {"state": "tests.unit.test_state_model:graph_text"},
            "state: 'tests.unit.test_state_model:graph_text' is not a state model",
        ),
    ],
)
def test_a_graph_that_does_not_fit_its_model_is_one_line_naming_the_node_and_key(
    nodes, settings, expected
):
    assert expected in error_of(graph_text(nodes, **settings))


def test_a_graph_without_a_state_model_takes_any_key():
    text = yaml.safe_dump(
        {
            "start": "first",
            "initial_state": {"mood": "calm", "count": 0},
            "nodes": {"first": {**SCRIPT, "outputs": ["colour"]}, **END_NODES},
        },
        sort_keys=False,
    )
    assert parse_graph(text).state_model is RunState


# -- the engine at run time ----------------------------------------------------


def pm():
    return get_plugin_manager(builtins=["stepkit.plugins.ask"])


def run_graph(tmp_path: Path, monkeypatch, stub_updates: dict, extra_outputs: tuple[str, ...] = ()):
    project = tmp_path / "project"
    project.mkdir()
    graph_file = project / "g.yaml"
    graph_file.write_text(
        graph_text({"first": SCRIPT}, initial_state={"count": 0, "stub_updates": stub_updates})
    )
    graph = graphs.load_protocol_graph(graph_file)
    graph.nodes["first"].outputs += list(
        extra_outputs
    )  # as a plugin that edits a loaded graph might
    monkeypatch.setattr(graphs, "load_protocol_graph", lambda source=None: graph)
    return run_step(project_dir=project, graph=graph_file, pm=pm())


def test_a_node_update_of_the_wrong_type_is_a_node_fault(tmp_path, monkeypatch):
    result = run_graph(tmp_path, monkeypatch, {"first": {"count": "many"}})
    assert result.outcome == "STEP_FAILED"
    assert "node first set 'count'" in result.state["failure_reason"]
    assert result.state["count"] == 0


def test_a_node_update_of_a_key_the_model_lacks_is_a_node_fault(tmp_path, monkeypatch):
    result = run_graph(
        tmp_path, monkeypatch, {"first": {"colour": "red"}}, extra_outputs=("colour",)
    )
    assert result.outcome == "STEP_FAILED"
    assert "'colour' is not a key of the state (CountState)" in result.state["failure_reason"]
    assert "colour" not in result.state


class _ReadRecorder(dict):
    """A node's ``ctx.state`` that notes every key read, and the models it is read as."""

    seen: ClassVar[set[str]] = set()
    models: ClassVar[set[type]] = set()

    def __getitem__(self, key):
        _ReadRecorder.seen.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        _ReadRecorder.seen.add(key)
        return super().get(key, default)


def test_every_key_a_built_in_node_reads_in_a_real_run_is_in_the_model(tmp_path, monkeypatch):
    """A runtime check of reads: a real step (gates, coder, reviewer, sweep, handoff, the
    final approval) with every node's ``ctx.state`` noting the keys it reads by key and
    the typed views read from it."""
    from stepkit.api import resume_run
    from stepkit.engine import driver
    from tests.support.e2e import make_project

    made, typed = driver._Engine._context, StageContext.typed

    def noted(self, model):
        _ReadRecorder.models.add(model)
        return typed(self, model)

    monkeypatch.setattr(StageContext, "typed", noted)

    def recording(self, node, usage):
        ctx = made(self, node, usage)
        ctx.state = _ReadRecorder(ctx.state)
        return ctx

    monkeypatch.setattr(driver._Engine, "_context", recording)
    project = make_project(tmp_path)
    for name, value in project.env().items():
        monkeypatch.setenv(name, value)
    _ReadRecorder.seen, _ReadRecorder.models = set(), set()
    paused = run_step(
        project_dir=project.root,
        engine=f"scripted:{project.script()}",
        coder=project.scripted_coder,
    )
    assert paused.outcome == "PAUSED"
    done = resume_run(paused.run_id, answer="approve", project_dir=project.root)
    assert done.outcome == "STEP_COMPLETE"
    # the nodes read the state as the model (its attributes) ...
    assert _ReadRecorder.models == {StepState}
    # ... and by key only what the model allows, a node's fault record
    assert {"edge_case_sweep_fault", "independent_review_fault"} <= _ReadRecorder.seen
    assert sorted(key for key in _ReadRecorder.seen if not has_key(StepState, key, NODE_IDS)) == []
