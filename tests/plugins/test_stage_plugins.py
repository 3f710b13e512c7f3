"""The built-in LLM stages: prompts, schemas, and what the harness may apply."""

from __future__ import annotations

import json

import pytest

from stepkit.protocol.state import step_state
from stepkit.records import HandoffProse, OrientResult
from stepkit.records import SweepResult as SweepAnswer
from tests.support.messages_api import role_schema

pytest_plugins = ["tests.support.messages_api"]

LATER_PLAN = (
    "---\r\nstep: 4\r\ntitle: Export   # keep this comment\r\nstatus: pending\r\n---\r\n"
    "## Objective\r\n\r\nExport reports.\r\n\r\n"
    "## Tasks\r\n\r\n- [ ] write exporter\r\n- [ ] add CLI flag\r\n\r\n"
    "## Edge cases\r\n\r\n* empty report\r\n\r\n"
    "## Out of scope\r\n\r\nPDF.\r\n"
)


def _edge_cases_span(text: str) -> tuple[int, int]:
    start = text.index("## Edge cases")
    return start, text.index("\n## ", start + 1)


def test_sweep_annotations_change_only_the_edge_cases_section(tmp_path):
    """A sweep that wants to change a later plan's Tasks: the proposal stays in
    downstream_updates, the annotation (even one smuggling a heading) lands as
    one bullet of Edge cases, and every other byte of the plan is unchanged."""
    from stepkit.planrepo.edits import append_edge_case

    plan = tmp_path / "04-export.md"
    plan.write_bytes(LATER_PLAN.encode())
    answer = SweepAnswer.model_validate(
        {
            "edge_case_report": "punted: unicode report names (step 4)",
            "downstream_updates": "Step 4, Tasks: before: '- [ ] add CLI flag' / after: "
            "'- [ ] add CLI flag and --format' / why: users asked",
            "needs_independent_review": False,
            "annotations": [
                {"step": 4, "edge_case": "report names with non-ASCII characters"},
                {"step": 4, "edge_case": "x\n\n## Tasks\n\n- [ ] delete the exporter"},
                {"step": 4, "edge_case": "empty report"},  # already there: no change
            ],
        }
    ).model_dump()

    applied = [append_edge_case(plan, note["edge_case"]) for note in answer["annotations"]]

    after = plan.read_bytes().decode()
    assert applied == [True, True, False]
    start, end = _edge_cases_span(LATER_PLAN)
    new_start, new_end = _edge_cases_span(after)
    assert after[:new_start] == LATER_PLAN[:start]
    assert after[new_end:] == LATER_PLAN[end:]
    section = after[new_start:new_end]
    assert section == (
        "## Edge cases\r\n\r\n* empty report\r\n"
        "* report names with non-ASCII characters\r\n"
        "* x ## Tasks - [ ] delete the exporter\r\n\r"
    )
    assert after.count("## Tasks") == 2  # the real heading, and the text inside one bullet
    assert "--format" not in after


def test_sweep_schema_rejects_annotations_without_a_step():
    with pytest.raises(ValueError):
        SweepAnswer.model_validate(
            {
                "edge_case_report": "",
                "downstream_updates": "",
                "needs_independent_review": False,
                "annotations": [{"edge_case": "no step"}],
            }
        )


# -- through the real SDK against the loopback Messages API -----------------

FAST = {"llm_max_retry_wait_s": 1, "llm_timeout_s": 10}
PLAN = (
    "---\nstep: 2\ntitle: Slugify\nstatus: pending\n---\n## Objective\n\nAdd slugify.\n\n"
    "## Tasks\n\n- [ ] slugify() in src/text.py\n\n## Acceptance criteria\n\n- `slugify` works.\n\n"
    "## Test commands\n\n- pytest -q\n"
)
ORIENT = {
    "plan_summary": "Adds slugify.",
    "implementation_brief": "Write src/text.py:slugify.",
    "staleness_report": "clean",
    "has_major_deviation": False,
    "deviation_summary": "None",
}
#: what the model answers for ORIENT: findings; stepkit derives the rest
ORIENT_ANSWER = {
    "plan_summary": "Adds slugify.",
    "implementation_brief": "Write src/text.py:slugify.",
    "findings": [],
    "deviation_summary": "None",
}
SWEEP = {
    "edge_case_report": "handled: empty string (tests/test_text.py:4)",
    "downstream_updates": "Step 3, Tasks: before: '- [ ] export' / after: "
    "'- [ ] export with --format' / why: slugs feed file names",
    "needs_independent_review": False,
    "annotations": [{"step": 3, "edge_case": "slugs that collide after normalisation"}],
}
HANDOFF = {
    "step_summary": "slugify added; tests pass",
    "result": "complete",
    "summary": "Added slugify.",
    "completed": "- slugify()",
    "not_completed": "None",
    "deviations": "None",
    "downstream_plan_updates": "Proposed a --format flag for step 3.",
    "edge_cases_discovered": "handled: empty string",
    "notes_for_next_step": "Use slugify for file names.",
    "notes_facts": ["Tests run with `pytest -q`."],
    "acceptance_criteria": [{"criterion": "C1", "tests": ["tests/test_slug.py::test_slug"]}],
}
GATES = [
    {"name": "format", "status": "pass", "command": "ruff format .", "exit_code": 0},
    {"name": "lint", "status": "pass", "command": "ruff check .", "exit_code": 0},
    {"name": "build", "status": "not_run", "summary": "no build command"},
    {
        "name": "tests",
        "status": "pass",
        "command": "pytest -q",
        "exit_code": 0,
        "evidence": "3 passed in 0.01s",
    },
]


def make_ctx(tmp_path, node: str, **state):
    from stepkit.config import Config
    from stepkit.pluginmanager import get_plugin_manager
    from stepkit.records import StageContext

    project = tmp_path / "project"
    steps = project / "plans" / "steps"
    steps.mkdir(parents=True, exist_ok=True)
    (project / "plans" / "handoffs").mkdir(exist_ok=True)
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "text.py").write_text("def slugify(text):\n    return text.lower()\n")
    plan = steps / "02-slugify.md"
    plan.write_text(PLAN)
    later = steps / "03-export.md"
    if not later.exists():
        later.write_text(LATER_PLAN.replace("step: 4", "step: 3"))
    base = {
        "step": 2,
        "title": "Slugify",
        "plan_path": str(plan),
        "plan_text": PLAN,
        "previous_handoff": "",
        "notes": "# Notes\n",
        "changed_files": ["src/text.py"],
        "diff": "+def slugify(text):\n+    return text.lower()\n",
        "gates": GATES,
        "fix_attempts": 0,
        "max_fix_attempts": 2,
        "fix_history": [],
        "handoff_path": str(project / "plans" / "handoffs" / "02-slugify.md"),
        "later_steps": [
            {"step": 3, "title": "Export", "path": str(later), "edge_cases": "* empty report"}
        ],
    }
    return StageContext(
        node=node,
        project_dir=project,
        plans_dir=project / "plans",
        state={**base, **state},
        settings=dict(FAST),
        config=Config(),
        pm=get_plugin_manager(
            builtins=[
                "stepkit.plugins.stages.orient",
                "stepkit.plugins.stages.sweep",
                "stepkit.plugins.stages.handoff",
            ]
        ),
        adhoc_dir=tmp_path / "adhoc",
    )


def first_user_blocks(messages_api, index: int = 0) -> list[dict]:
    return messages_api.requests[index].body["messages"][0]["content"]


def test_orient_answers_through_the_sdk_with_read_only_tools(tmp_path, messages_api):
    from stepkit.plugins.stages.orient import ORIENT_SYSTEM, stepkit_orient
    from stepkit.plugins.stages.readers import READER_SYSTEM

    ctx = make_ctx(tmp_path, "orient")
    messages_api.reply_tool("read_file", {"path": "src/text.py"})
    messages_api.reply_json(ORIENT_ANSWER)

    assert stepkit_orient(ctx) == OrientResult(**ORIENT)  # the built-ins return their result models

    body = messages_api.requests[0].body
    assert [t["name"] for t in body["tools"]] == ["read_file", "list_dir", "search", "run_command"]
    assert (
        body["system"][0]["text"] == READER_SYSTEM
    )  # shared; the role's own text follows the plan
    prefix, prompt = first_user_blocks(messages_api)
    assert "- [ ] slugify() in src/text.py" in prefix["text"]
    assert prompt["text"].startswith(f"# Your role: orientation\n\n{ORIENT_SYSTEM}\n\n")
    assert "Orient for step 2" in prompt["text"]
    assert "def slugify(text):" in messages_api.tool_results()[0]["content"]


def test_orient_request_stays_bounded_with_a_huge_log_in_the_previous_handoff(
    tmp_path, messages_api
):
    from stepkit.plugins.stages.orient import stepkit_orient

    log = "\n".join(f"tests/test_big.py::test_case_{i} PASSED" for i in range(5000))
    previous = (
        "---\nstep: 1\ntitle: Setup\nresult: complete\n---\n## Summary\n\nSet up.\n\n"
        "## Evidence\n\n$ pytest -v\nexit code: 0\n\n```text\n"
        + log
        + "\n5000 passed in 9.1s\n```\n\n## Notes for next step\n\nKeep the fixtures.\n"
    )
    ctx = make_ctx(tmp_path, "orient", previous_handoff=previous)
    messages_api.reply_json(ORIENT_ANSWER)

    stepkit_orient(ctx)

    raw = messages_api.requests[0].raw
    assert len(previous) > 200_000
    assert len(raw) < 40_000, len(raw)
    sent = first_user_blocks(messages_api)[1]["text"]
    assert sent.count("PASSED") <= 30
    assert "log lines omitted" in sent
    assert "5000 passed in 9.1s" in sent and "Keep the fixtures." in sent
    body = messages_api.requests[0].body
    assert body["cache_control"] == {"type": "ephemeral"}  # the tool loop's history
    assert "cache_control" not in first_user_blocks(messages_api)[1]


def test_sweep_answers_through_the_sdk_with_read_only_tools(tmp_path, messages_api):
    from stepkit.plugins.stages.readers import READER_SYSTEM
    from stepkit.plugins.stages.sweep import SWEEP_SYSTEM, stepkit_sweep

    ctx = make_ctx(tmp_path, "edge_case_sweep")
    messages_api.reply_json(SWEEP)

    assert stepkit_sweep(ctx) == SweepAnswer(**SWEEP)

    body = messages_api.requests[0].body
    assert body["system"][0]["text"] == READER_SYSTEM
    assert first_user_blocks(messages_api)[1]["text"].startswith(
        f"# Your role: sweep\n\n{SWEEP_SYSTEM}"
    )
    assert [t["name"] for t in body["tools"]] == ["read_file", "list_dir", "search", "run_command"]
    assert set(role_schema(body, "sweep")["properties"]) == set(SWEEP)


def test_sweep_through_the_harness_changes_only_the_later_edge_cases(tmp_path, messages_api):
    from stepkit.protocol.stages import sweep

    ctx = make_ctx(tmp_path, "edge_case_sweep")
    later = tmp_path / "project" / "plans" / "steps" / "03-export.md"
    before = later.read_bytes()
    messages_api.reply_tool("search", {"pattern": "slugify"})
    messages_api.reply_json(SWEEP)

    outcome = sweep(ctx)

    assert outcome.updates["downstream_updates"] == SWEEP["downstream_updates"]
    assert outcome.updates["applied_annotations"] == SWEEP["annotations"]
    after = later.read_bytes()
    added = b"* slugs that collide after normalisation\r\n"
    assert after.replace(added, b"", 1) == before
    assert after.index(added) > after.index(b"## Edge cases") > after.index(b"## Tasks")
    assert after.index(added) < after.index(b"## Out of scope")
    prompt = first_user_blocks(messages_api)[1]["text"]
    assert "* empty report" in prompt and "- src/text.py" in prompt
    assert messages_api.requests[0].body["tools"][0]["name"] == "read_file"


def test_write_handoff_answers_through_the_sdk(tmp_path, messages_api):
    from stepkit.plugins.stages.handoff import stepkit_write_handoff

    ctx = make_ctx(tmp_path, "write_handoff")
    messages_api.reply_json(HANDOFF)

    assert stepkit_write_handoff(ctx) == HandoffProse(**HANDOFF)
    assert set(role_schema(messages_api.requests[0].body, "handoff")["properties"]) == set(HANDOFF)


def test_the_handoff_writer_is_shown_the_criteria_numbered_and_its_schema_takes_only_their_ids(
    tmp_path, messages_api
):
    from stepkit.plugins.stages.handoff import stepkit_write_handoff

    ctx = make_ctx(tmp_path, "write_handoff")
    messages_api.reply_json(
        {**HANDOFF, "acceptance_criteria": [{"criterion": "slugify()", "tests": []}]}
    )
    messages_api.reply_json(HANDOFF)  # a prefix is refused at the model boundary; the id is taken

    assert stepkit_write_handoff(ctx).acceptance_criteria[0].criterion == "C1"
    prompt = first_user_blocks(messages_api)[1]["text"]
    assert (
        '<document title="Acceptance criteria (cite them by id)">\nC1: `slugify` works.\n</document>'
        in prompt
    )
    schema = role_schema(messages_api.requests[0].body, "handoff")
    items = schema["properties"]["acceptance_criteria"]["items"]
    entry = schema["$defs"][items["$ref"].rsplit("/", 1)[1]] if "$ref" in items else items
    assert entry["properties"]["criterion"]["enum"] == ["C1"]
    assert len(messages_api.requests) == 2


def test_handoff_prose_has_no_tools_and_the_harness_renders_a_valid_file(tmp_path, messages_api):
    from stepkit.protocol.handoff.check import check_handoff_text
    from stepkit.protocol.stages import handoff

    ctx = make_ctx(
        tmp_path,
        "write_handoff",
        edge_case_sweep_fault="engine: 529 overloaded",
        handoff_feedback=["missing section '## Deviations'"],
        unresolved_critical=["🔴 path traversal in export"],
    )
    ctx.settings["stage_nodes"] = {"sweep": ["edge_case_sweep"]}
    messages_api.reply_json({**HANDOFF, "result": "partial"})

    outcome = handoff(ctx)

    body = messages_api.requests[0].body
    assert "cache_control" not in body  # its one request: nothing reads its end
    prompt = first_user_blocks(messages_api)[1]["text"]
    assert "- build: NOT RUN (no command; this is NOT evidence that build passed)" in prompt
    assert "PIPELINE-FAULT: edge-case sweep did not run (engine: 529 overloaded)" in prompt
    assert "still open (review budget spent): 🔴 path traversal in export" in prompt
    assert "<document title=\"Problems to fix\">\n- missing section '## Deviations'" in prompt
    assert outcome.updates["step_summary"] == "slugify added; tests pass"
    # a draft outside the plan repo: only a run's final approval puts it there
    assert not (tmp_path / "project" / "plans" / "handoffs" / "02-slugify.md").exists()
    draft = tmp_path / "adhoc" / "handoff" / "02-slugify.md"
    assert outcome.updates["handoff_draft"] == str(draft)
    text = draft.read_text()
    assert check_handoff_text(text, GATES) == []
    assert "PIPELINE-FAULT: edge-case sweep did not run" in text
    notes = (tmp_path / "project" / "plans" / "NOTES.md").read_text()
    assert notes.endswith("- Tests run with `pytest -q`. (step 2)\n")


def test_a_project_plugin_answers_before_the_llm_default(tmp_path, messages_api):
    from stepkit.hookspecs import hookimpl
    from stepkit.pluginmanager import first_answer

    class Local:
        @hookimpl
        def stepkit_orient(self, ctx):
            return {**ORIENT, "plan_summary": "from stepconf"}

    ctx = make_ctx(tmp_path, "orient")
    ctx.pm.register(Local(), name="stepconf")

    answer, plugin = first_answer(ctx.pm, "stepkit_orient", ctx=ctx)

    assert (answer["plan_summary"], plugin) == ("from stepconf", "stepconf")
    assert messages_api.requests == []


def test_clip_keeps_head_and_tail_and_masks_secrets():
    from stepkit.plugins.stages.documents import clip

    text = "KEY=sk-ant-api03-abcdefghijklmnop\n" + "".join(f"line {i}\n" for i in range(10_000))
    clipped = clip(text, 2_000, "log")
    assert len(clipped) < 2_200
    assert "sk-ant-api03" not in clipped and "[REDACTED]" in clipped
    assert "line 9999" in clipped and "line 0\n" in clipped
    assert "[... log: " in clipped and " lines, " in clipped
    assert clip("short", 2_000, "x") == "short"


def test_clip_cuts_long_fenced_logs_as_markdown_sees_fences():
    """Fences are followed the way the handoff checker follows them (plan.track_fence):
    a closing run needs the same character and at least the opening's length, and
    a fence left open runs to the end."""
    from stepkit.plugins.stages.documents import FENCE_KEEP_HEAD, FENCE_KEEP_TAIL, clip

    log = [f"log {i}" for i in range(100)]
    text = "\n".join(
        ["before", "````text", *log[:50], "```", *log[50:], "````", "after", "~~~", *log]
    )

    def shrunk(cut):
        return [
            *log[:FENCE_KEEP_HEAD],
            f"[... L: {cut} log lines omitted ...]",
            *log[-FENCE_KEEP_TAIL:],
        ]

    kept = FENCE_KEEP_HEAD + FENCE_KEEP_TAIL
    assert clip(text, 100_000, "L").split("\n") == [
        "before",
        "````text",
        *shrunk(101 - kept),
        "````",
        "after",
        "~~~",
        *shrunk(100 - kept),
    ]


def test_the_plans_context_snippets_reach_orient_whole():
    from stepkit.plugins.stages.documents import plan_prefix

    snippet = "\n".join(f"    line_{i} = {i}" for i in range(60))
    plan = f"## Context\n```python\n{snippet}\n```\n\n## Tasks\n- do it\n"
    prefix = plan_prefix(
        step_state({"step": 1, "title": "T", "plan_path": "plans/steps/01-t.md", "plan_text": plan})
    )
    assert snippet in prefix


@pytest.mark.parametrize(
    ("stage", "hook", "answer"),
    [
        ("implement", "stepkit_implement", {"sentinel": "DONE"}),
        ("review", "stepkit_review", {"review_report": ["not", "text"]}),
    ],
)
def test_an_invalid_coder_or_reviewer_answer_is_a_one_line_stage_fault(
    tmp_path, stage, hook, answer
):
    """As for orient, sweep and handoff: the node's fallback gets a fault, not a crash."""
    from stepkit.hookspecs import hookimpl
    from stepkit.protocol.stages import run_stage
    from stepkit.records import StageFault

    class Broken:
        pass

    setattr(Broken, hook, hookimpl(lambda self, ctx: answer))
    ctx = make_ctx(tmp_path, stage)
    ctx.pm.register(Broken(), name="broken")
    with pytest.raises(StageFault) as fault:
        run_stage(stage, ctx)
    assert fault.value.note.startswith(f"{hook} returned an invalid result: ")
    assert "\n" not in fault.value.note


# -- each node sees what its instructions assume -----------------------------


def test_orient_sees_the_later_steps_and_stepkit_derives_the_verdict(tmp_path, messages_api):
    from stepkit.plugins.stages.orient import stepkit_orient

    ctx = make_ctx(tmp_path, "orient")
    major = {
        "severity": "major",
        "plan_says": "export reads slugs from src/text.py",
        "code_has": "no slug module",
        "evidence": "src/text.py:1",
        "correction": "step 3 must import slugify",
    }
    messages_api.reply_json(
        {
            **ORIENT_ANSWER,
            "findings": [major],
            "deviation_summary": "Step 3 assumes a module that differs.",
        }
    )

    answer = stepkit_orient(ctx)

    prompt = first_user_blocks(messages_api)[1]["text"]
    assert "### Step 3: Export" in prompt and "Objective:\nExport reports." in prompt
    assert "write exporter" not in prompt  # orient gets Objectives and assumptions only
    assert answer.has_major_deviation is True
    assert answer.staleness_report == (
        "- [major] plan says: export reads slugs from src/text.py; code has: no slug module "
        "(src/text.py:1); correction: step 3 must import slugify"
    )
    assert answer.deviation_summary == "Step 3 assumes a module that differs."
    schema = role_schema(messages_api.requests[0].body, "orientation")
    assert "has_major_deviation" not in schema["properties"] and "findings" in schema["properties"]


def test_a_minor_finding_is_no_major_deviation(tmp_path, messages_api):
    from stepkit.plugins.stages.orient import stepkit_orient

    minor = {
        "severity": "minor",
        "plan_says": "text.py",
        "code_has": "src/text.py",
        "evidence": "src/text.py:1",
        "correction": "use src/text.py",
    }
    messages_api.reply_json({**ORIENT_ANSWER, "findings": [minor], "deviation_summary": "x"})

    answer = stepkit_orient(make_ctx(tmp_path, "orient"))

    assert answer.has_major_deviation is False and answer.deviation_summary == "None"
    assert answer.staleness_report.startswith("- [minor] plan says: text.py")


def test_the_sweep_sees_the_later_steps_sections_with_their_paths(tmp_path, messages_api):
    from stepkit.plugins.stages.sweep import stepkit_sweep

    ctx = make_ctx(tmp_path, "edge_case_sweep")
    messages_api.reply_json(SWEEP)

    stepkit_sweep(ctx)

    prompt = first_user_blocks(messages_api)[1]["text"]
    later = tmp_path / "project" / "plans" / "steps" / "03-export.md"
    for expected in (
        f"Plan file: {later}",
        "Objective:\nExport reports.",
        "Tasks:\n- [ ] write exporter",
        "Out of scope:\nPDF.",
        "Edge cases:\n* empty report",
    ):
        assert expected in prompt.replace("\r", "")
    defs = messages_api.requests[0].body["output_config"]["format"]["schema"]["$defs"]
    target = next(d for d in defs.values() if "edge_case" in d["properties"])["properties"]["step"]
    assert target.get("enum", [target.get("const")]) == [3]


def test_a_sweep_annotation_of_a_step_not_listed_is_refused_and_asked_again(tmp_path, messages_api):
    from stepkit.plugins.stages.sweep import stepkit_sweep

    messages_api.reply_json(
        {**SWEEP, "annotations": [{"step": 2, "edge_case": "the current step"}]}
    )
    messages_api.reply_json(SWEEP)

    assert (
        stepkit_sweep(make_ctx(tmp_path, "edge_case_sweep")).annotations
        == SweepAnswer(**SWEEP).annotations
    )
    assert len(messages_api.requests) == 2
    assert "not accepted" in messages_api.requests[1].body["messages"][-1]["content"][0]["text"]


def test_the_handoff_writer_sees_the_diff_summary_coder_report_brief_and_fixes(
    tmp_path, messages_api
):
    from stepkit.plugins.stages.handoff import stepkit_write_handoff

    diff = (
        "--- a/src/text.py\n+++ b/src/text.py\n@@ -1,2 +1,3 @@\n def slugify(text):\n"
        "-    return text\n+    text = text.strip()\n+    return text.lower()\n"
    )
    ctx = make_ctx(
        tmp_path,
        "write_handoff",
        diff=diff,
        implementation_brief="Write slugify in src/text.py; test empty input.",
        coder_result={"sentinel": "CODER_COMPLETE", "text": "Built-in coder: added slugify"},
        fix_attempts=1,
        fix_history=["tests fix 1: test_empty failed"],
    )
    messages_api.reply_json(HANDOFF)

    stepkit_write_handoff(ctx)

    prompt = first_user_blocks(messages_api)[1]["text"]
    for expected in (
        "- src/text.py: +2 -1",
        "+    text = text.strip()",
        "Built-in coder: added slugify",
        "Write slugify in src/text.py; test empty input.",
        "Fix attempts used: 1 of 2\n- tests fix 1: test_empty failed",
    ):
        assert expected in prompt


@pytest.mark.parametrize("dropped", ["result", "deviations"])
def test_a_handoff_missing_a_section_or_its_result_is_refused_and_asked_again(
    tmp_path, messages_api, dropped
):
    from stepkit.plugins.stages.handoff import stepkit_write_handoff

    messages_api.reply_json({k: v for k, v in HANDOFF.items() if k != dropped})
    messages_api.reply_json(HANDOFF)

    assert stepkit_write_handoff(make_ctx(tmp_path, "write_handoff")) == HandoffProse(**HANDOFF)
    assert len(messages_api.requests) == 2
    retry = messages_api.requests[1].body["messages"][-1]["content"][0]["text"]
    assert "not accepted" in retry and dropped in retry
    schema = role_schema(messages_api.requests[0].body, "handoff")
    assert set(schema["required"]) == set(HANDOFF)


def test_an_empty_handoff_section_is_refused_too(tmp_path, messages_api):
    from stepkit.plugins.stages.handoff import stepkit_write_handoff

    messages_api.reply_json({**HANDOFF, "not_completed": "  "})
    messages_api.reply_json(HANDOFF)

    assert stepkit_write_handoff(make_ctx(tmp_path, "write_handoff")) == HandoffProse(**HANDOFF)
    assert (
        "must not be empty" in messages_api.requests[1].body["messages"][-1]["content"][0]["text"]
    )


def test_the_sweep_and_the_reviewer_get_the_tamper_flags_in_a_document(tmp_path):
    from stepkit.plugins.coders.reviewer import build_review_prompt
    from stepkit.plugins.stages.sweep import sweep_prompt
    from stepkit.records import TamperFlag

    flag = "tests/test_text.py: a test was deleted"
    raised = TamperFlag.in_changes("deleted_test", "tests/test_text.py", flag)
    ctx = make_ctx(tmp_path, "edge_case_sweep", tamper_flags=[raised.model_dump()])
    for prompt in (sweep_prompt(step_state(ctx)), build_review_prompt(step_state(ctx))):
        framed = prompt.split('<document title="Tamper flags raised by the harness', 1)[1]
        assert f"\n- {flag}\n</document>" in framed.split("</document>", 1)[0] + "</document>"


def _cached_prefix(body: dict) -> str:
    """Tools, system, output format, effort and the first message block (the
    plan), without markers: what two nodes must send byte for byte to read
    each other's cached prefix."""

    def unmarked(items: list[dict]) -> list[dict]:
        return [{k: v for k, v in item.items() if k != "cache_control"} for item in items]

    return json.dumps(
        [
            unmarked(body["tools"]),
            unmarked(body["system"]),
            body["output_config"],
            body.get("thinking"),
            unmarked(body["messages"][0]["content"][:1]),
        ]
    )


def test_the_reading_nodes_send_one_cached_prefix_and_the_handoff_still_runs_no_tool(
    tmp_path, messages_api
):
    """The sweep and the handoff writer (one effort) send the same tools,
    system, output format and plan, marked, so the handoff reads the sweep's
    cache; the handoff's role is in the message after it, and a tool call
    it makes is refused by the harness, never run."""
    from stepkit.plugins.stages.handoff import HANDOFF_SYSTEM, stepkit_write_handoff
    from stepkit.plugins.stages.sweep import stepkit_sweep

    messages_api.reply_json(SWEEP)
    messages_api.reply_tool("run_command", {"command": "touch ran"})
    messages_api.reply_json(HANDOFF)

    stepkit_sweep(make_ctx(tmp_path, "edge_case_sweep"))
    assert stepkit_write_handoff(make_ctx(tmp_path, "write_handoff")) == HandoffProse(**HANDOFF)

    sweep, handoff, after_call = (r.body for r in messages_api.requests)
    assert _cached_prefix(sweep) == _cached_prefix(handoff)
    assert handoff["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert HANDOFF_SYSTEM in handoff["messages"][0]["content"][1]["text"]
    [refused] = messages_api.tool_results()
    assert refused["is_error"] is True and "has no tools" in refused["content"]
    assert not (tmp_path / "project" / "ran").exists()
    assert "cache_control" not in after_call  # its reply cannot call a tool: no tail written


def test_a_reading_node_that_fills_another_roles_field_is_asked_again(tmp_path, messages_api):
    """The shared output format lets the model fill any role's field; the
    harness accepts only the asking role's."""
    from stepkit.plugins.stages.sweep import stepkit_sweep

    messages_api.reply_json({"sweep": SWEEP, "orientation": ORIENT_ANSWER})
    messages_api.reply_json({"sweep": SWEEP})

    assert stepkit_sweep(make_ctx(tmp_path, "edge_case_sweep")) == SweepAnswer(**SWEEP)
    retry = messages_api.requests[1].body["messages"][-1]["content"][0]["text"]
    assert "not accepted" in retry and "orientation must be null" in retry
