"""The table of stages (``stepkit.protocol.stages.STAGES``) is the one home
of a stage: its hook is a documented hookspec, the graph's stage nodes obey
its resume rule, and what a stage hook answers, a model or a dict, is
validated against the stage's result model."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import stepkit
from stepkit import hookspecs
from stepkit.config import Config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.protocol.graphs import STEP_RUNNER, load_protocol_graph
from stepkit.protocol.stages import STAGES, run_stage, stage_of
from stepkit.records import OrientResult, StageContext, StageFault

ROOT = Path(__file__).resolve().parents[2]
ORIENT = {
    "plan_summary": "Adds mul.",
    "implementation_brief": "Write calc.mul.",
    "staleness_report": "clean",
    "has_major_deviation": False,
    "deviation_summary": "None",
}


@pytest.mark.parametrize("name", [name for name, stage in STAGES.items() if stage.hook])
def test_every_stage_hook_is_a_hookspec_with_a_docstring_and_a_hooks_md_section(name):
    stage = STAGES[name]
    spec = getattr(hookspecs, stage.hook, None)
    assert spec is not None, f"{name}: no hookspec {stage.hook}"
    assert inspect.getdoc(spec), stage.hook
    assert stage.result.__name__ in str(inspect.signature(spec).return_annotation), (
        f"{stage.hook} does not say it returns {stage.result.__name__}"
    )
    headings = re.findall(
        r"^### `(\w+)\(", (ROOT / "hooks.md").read_text(encoding="utf-8"), re.MULTILINE
    )
    assert stage.hook in headings


def test_only_verify_runs_without_a_hook():
    assert [name for name, stage in STAGES.items() if stage.hook is None] == ["verify"]


def test_the_step_runner_runs_table_stages_by_their_resume_rule():
    stage_nodes = [n for n in load_protocol_graph().nodes.values() if n.kind == "stage"]
    assert {n.stage for n in stage_nodes} == set(STAGES) - {"verify"}
    for node in stage_nodes:
        assert node.rerun_on_resume == STAGES[node.stage].rerun_on_resume, node.id


def test_a_graph_cannot_re_run_a_stage_that_is_not_safe_to_re_run(tmp_path):
    """A graph file that reuses the implement stage and forgets to forbid its
    re-run still never re-runs the coder on resume."""
    text = STEP_RUNNER.read_text(encoding="utf-8")
    assert "    rerun_on_resume: false\n" in text
    graph = tmp_path / "mine.yaml"
    graph.write_text(text.replace("    rerun_on_resume: false\n", ""), encoding="utf-8")
    assert load_protocol_graph(graph).nodes["implement"].rerun_on_resume is False


def test_a_node_finds_its_stage_through_the_runs_stage_nodes():
    ctx = context(Path("."), node="my_review", settings={"stage_nodes": {"review": ["my_review"]}})
    assert stage_of(ctx) is STAGES["review"]
    assert stage_of(context(Path("."), node="write_handoff")) is None


# -- results: a model or a dict, validated ------------------------------------


class Answers:
    """A third-party plugin answering every stage hook with what it is given."""

    def __init__(self, answer):
        self.answer = answer

    @stepkit.hookimpl
    def stepkit_orient(self, ctx):
        return self.answer

    @stepkit.hookimpl
    def stepkit_sweep(self, ctx):
        return self.answer


def context(
    project: Path, node: str = "orient", settings: dict | None = None, plugin=None
) -> StageContext:
    pm = get_plugin_manager(builtins=[])
    if plugin is not None:
        pm.register(plugin)
    return StageContext(
        node=node,
        project_dir=project,
        plans_dir=project / "plans",
        state={},
        settings=settings or {},
        config=Config(),
        pm=pm,
    )


def test_a_dict_result_is_validated_and_taken(tmp_path):
    outcome = run_stage("orient", context(tmp_path, plugin=Answers(dict(ORIENT))))
    assert {key: outcome.updates[key] for key in ORIENT} == ORIENT


def test_a_model_result_is_taken(tmp_path):
    outcome = run_stage("orient", context(tmp_path, plugin=Answers(OrientResult(**ORIENT))))
    assert outcome.updates["plan_summary"] == "Adds mul."


@pytest.mark.parametrize(
    "stage, answer, field",
    [
        ("orient", {**ORIENT, "has_major_deviation": "maybe"}, "has_major_deviation"),
        (
            "orient",
            {key: value for key, value in ORIENT.items() if key != "implementation_brief"},
            "implementation_brief",
        ),
        # a model built without validation is checked again
        (
            "orient",
            OrientResult.model_construct(**{**ORIENT, "staleness_report": None}),
            "staleness_report",
        ),
        (
            "sweep",
            {
                "edge_case_report": "",
                "downstream_updates": "None",
                "needs_independent_review": False,
                "annotations": [{"step": "three", "edge_case": "x"}],
            },
            "annotations",
        ),
    ],
)
def test_a_bad_result_is_a_stage_fault_naming_the_field(tmp_path, stage, answer, field):
    with pytest.raises(StageFault) as fault:
        run_stage(stage, context(tmp_path, plugin=Answers(answer)))
    note = fault.value.note
    assert note.startswith(f"{STAGES[stage].hook} returned an invalid result: ")
    assert field in note and "\n" not in note


@pytest.mark.parametrize(
    "stage, node, effort",
    [
        ("orient", "my_orient", "high"),
        ("review", "second_opinion", "high"),
        ("handoff", "independent_review", None),  # a node id means nothing; its stage decides
    ],
)
def test_the_default_effort_is_the_stage_s_whatever_the_node_is_called(stage, node, effort):
    from stepkit.plugins.llm.anthropic_engine import resolve_effort

    ctx = context(Path("."), node=node, settings={"stage_nodes": {stage: [node]}})
    assert resolve_effort(node, ctx, "claude-opus-5-5") == effort
