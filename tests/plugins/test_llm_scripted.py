"""The scripted offline engine: answers per node id, lists in order, faults, resume."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from stepkit.config import Config
from stepkit.errors import UsageError
from stepkit.pluginmanager import StepkitPluginManager
from stepkit.plugins.llm.engine import make_engine
from stepkit.plugins.llm.scripted import ScriptedEngine
from stepkit.records import StageContext, StageFault
from stepkit.workspace.store import store_dir

ANSWERS = """\
orient:
  plan_summary: adds slugify
  has_major_deviation: false
write_handoff:
  - {fault: "model overloaded"}
  - plan_summary: second
    has_major_deviation: true
bad_node:
  plan_summary: 3
"""


class Answer(BaseModel):
    plan_summary: str
    has_major_deviation: bool


def make_ctx(
    tmp_path: Path,
    run_dir: Path | None = None,
    node: str = "orient",
    pm: StepkitPluginManager | None = None,
) -> StageContext:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "answers.yaml").write_text(ANSWERS)
    events: list[dict] = []
    ctx = StageContext(
        node=node,
        project_dir=project,
        plans_dir=project / "plans",
        state={},
        settings={},
        config=Config(),
        pm=pm or StepkitPluginManager(),
        run_dir=run_dir,
        emit=lambda kind, **f: events.append({"kind": kind, **f}),
    )
    ctx.events = events
    return ctx


def ask(engine, ctx: StageContext, node: str) -> Answer:
    return engine.structured(node=node, system="s", prompt="p", schema=Answer, tools=None, ctx=ctx)


def test_a_single_answer_is_given_at_every_call(tmp_path):
    ctx = make_ctx(tmp_path)
    engine = make_engine("scripted:answers.yaml", ctx)  # relative: found in the project dir
    assert isinstance(engine, ScriptedEngine)
    assert (
        ask(engine, ctx, "orient")
        == ask(engine, ctx, "orient")
        == Answer(plan_summary="adds slugify", has_major_deviation=False)
    )
    assert [e["engine"] for e in ctx.events] == ["scripted", "scripted"]
    assert ctx.events[0]["input_tokens"] == 0 and ctx.usage.cost_usd == 0


def test_a_list_is_consumed_in_order_then_runs_out(tmp_path):
    ctx = make_ctx(tmp_path)
    engine = make_engine("scripted:answers.yaml", ctx)
    with pytest.raises(StageFault) as info:
        ask(engine, ctx, "write_handoff")
    assert info.value.note == "model overloaded"
    assert ask(engine, ctx, "write_handoff").plan_summary == "second"
    with pytest.raises(StageFault, match="called 3 times but .* has 2 answer"):
        ask(engine, ctx, "write_handoff")


def test_the_position_survives_a_new_engine_in_the_same_run(tmp_path):
    run_dir = store_dir(tmp_path / "project") / "runs" / "r1"
    ctx = make_ctx(tmp_path, run_dir)
    with pytest.raises(StageFault):
        ask(make_engine("scripted:answers.yaml", ctx), ctx, "write_handoff")
    assert make_engine("scripted:answers.yaml", ctx) is make_engine("scripted:answers.yaml", ctx)
    # a resumed run builds a new engine in a new process: the counter is on disk
    fresh = ScriptedEngine.load("answers.yaml", ctx.project_dir)
    assert ask(fresh, ctx, "write_handoff").plan_summary == "second"
    assert json.loads((run_dir / "scripted_calls.json").read_text()) == {"write_handoff": 2}


def test_missing_node_and_invalid_answer_are_faults(tmp_path):
    ctx = make_ctx(tmp_path)
    engine = make_engine("scripted:answers.yaml", ctx)
    with pytest.raises(StageFault, match="has no answer for node sweep"):
        ask(engine, ctx, "sweep")
    with pytest.raises(StageFault, match="bad_node .* does not match Answer: plan_summary"):
        ask(engine, ctx, "bad_node")


def test_the_engine_is_picked_from_settings(tmp_path):
    ctx = make_ctx(tmp_path)
    ctx.settings["engine"] = f"scripted:{ctx.project_dir / 'answers.yaml'}"
    assert isinstance(make_engine(None, ctx), ScriptedEngine)


@pytest.mark.parametrize(
    "spec, content, message",
    [
        ("scripted:", None, "needs a file name"),
        ("scripted:nope.yaml", None, "cannot read nope.yaml"),
        ("scripted:bad.yaml", "a: [1,\n", "is not valid YAML"),
        ("scripted:bad.yaml", "- 1\n- 2\n", "must map node ids to answers"),
    ],
)
def test_bad_files_are_usage_errors(tmp_path, spec, content, message):
    ctx = make_ctx(tmp_path)
    if content is not None:
        (ctx.project_dir / "bad.yaml").write_text(content)
    with pytest.raises(UsageError, match=message):
        make_engine(spec, ctx)


def run_dir(tmp_path: Path, run_id: str) -> Path:
    return store_dir(tmp_path / "project") / "runs" / run_id


@pytest.mark.parametrize(
    "one_pm", [False, True], ids=["a plugin manager each", "one plugin manager"]
)
def test_two_runs_in_one_process_keep_their_own_engines(tmp_path, one_pm):
    shared = StepkitPluginManager()
    a = make_ctx(tmp_path, run_dir(tmp_path, "a"), pm=shared)
    b = make_ctx(tmp_path, run_dir(tmp_path, "b"), pm=shared if one_pm else StepkitPluginManager())
    first_a = make_engine("scripted:answers.yaml", a)
    first_b = make_engine("scripted:answers.yaml", b)
    assert first_a is not first_b
    assert make_engine("scripted:answers.yaml", a) is first_a
    assert make_engine("scripted:answers.yaml", b) is first_b


def test_runs_on_parallel_threads_never_see_each_others_engine(tmp_path):
    runs, rounds = 6, 50
    barrier = threading.Barrier(runs)
    pm = StepkitPluginManager()
    seen: dict[int, set[int]] = {}

    def run(n: int) -> None:
        ctx = make_ctx(tmp_path, run_dir(tmp_path, f"r{n}"), pm=pm)
        barrier.wait()
        seen[n] = {id(make_engine("scripted:answers.yaml", ctx)) for _ in range(rounds)}

    threads = [threading.Thread(target=run, args=(n,)) for n in range(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(len(ids) == 1 for ids in seen.values())  # one engine per run, never rebuilt
    assert len(set().union(*seen.values())) == runs  # and no two runs share one


def test_a_finished_run_lets_its_engines_go(tmp_path):
    ctx = make_ctx(tmp_path, run_dir(tmp_path, "done"))
    other = make_ctx(tmp_path, run_dir(tmp_path, "going"), pm=ctx.pm)
    finished, going = (
        make_engine("scripted:answers.yaml", ctx),
        make_engine("scripted:answers.yaml", other),
    )
    ctx.pm.hook.stepkit_run_finished(run_id="done", outcome="STEP_COMPLETE", exit_code=0, output="")
    assert make_engine("scripted:answers.yaml", ctx) is not finished
    assert make_engine("scripted:answers.yaml", other) is going


def test_an_answers_file_of_the_previous_format_gets_the_later_fields_defaults(tmp_path):
    """A handoff answer written before notes_facts and acceptance_criteria
    existed validates, with [] for both; a field it gives is kept."""
    from stepkit.plugins.stages.answers import HandoffAnswer

    previous = {
        "step_summary": "Added mul.",
        "result": "complete",
        "summary": "Added calc.mul.",
        "completed": "- mul",
        "not_completed": "None",
        "deviations": "None",
        "downstream_plan_updates": "None",
        "edge_cases_discovered": "None",
        "notes_for_next_step": "None",
    }
    ctx = make_ctx(tmp_path)
    (ctx.project_dir / "old.yaml").write_text(
        json.dumps({"write_handoff": previous, "orient": {**previous, "notes_facts": ["x"]}})
    )
    engine = make_engine("scripted:old.yaml", ctx)
    answer = engine.structured(
        node="write_handoff", system="s", prompt="p", schema=HandoffAnswer, tools=None, ctx=ctx
    )
    assert answer.acceptance_criteria == [] and answer.notes_facts == []
    kept = engine.structured(
        node="orient", system="s", prompt="p", schema=HandoffAnswer, tools=None, ctx=ctx
    )
    assert kept.notes_facts == ["x"]
    # a field that is not a later one is still required
    (ctx.project_dir / "old.yaml").write_text(json.dumps({"write_handoff": {"result": "complete"}}))
    with pytest.raises(StageFault, match="step_summary"):
        make_engine("scripted:old.yaml", make_ctx(tmp_path)).structured(
            node="write_handoff", system="s", prompt="p", schema=HandoffAnswer, tools=None, ctx=ctx
        )
