"""The independent reviewer: built-in (real SDK, loopback API), command, presets.
A reviewer that did not run properly is a fault, never findings."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from pathlib import Path

import pytest

from stepkit.plugins.coders.presets import PRESETS
from stepkit.plugins.coders.presets.base import Call
from stepkit.plugins.coders.reviewer import stepkit_review
from stepkit.plugins.stages.answers import ReviewAnswer
from stepkit.workspace import scope
from tests.support.coder import make_ctx
from tests.support.gitrepo import init_repo
from tests.support.messages_api import role_schema

pytest_plugins = ["tests.support.messages_api"]

FAST = {"llm_max_retry_wait_s": 2, "llm_timeout_s": 10}
REPORT = "🔴 critical: greet.py: greet('Ann') returns 'Hi Ann' (criterion 1)\n🟢 minor: docstring"
FINDINGS = [
    {
        "severity": "critical",
        "file": "greet.py",
        "criterion": "greet('Ann') is 'Hello, Ann!'",
        "problem": "greet('Ann') returns 'Hi Ann'",
    },
    {"severity": "minor", "file": "greet.py", "criterion": "none", "problem": "no docstring"},
]
RENDERED = (
    "🔴 critical: greet.py (greet('Ann') is 'Hello, Ann!'): greet('Ann') returns 'Hi Ann'\n"
    "🟢 minor: greet.py (none): no docstring"
)


@pytest.fixture
def step(tmp_path):
    """A repo where the step changed greet.py, and the state implement leaves."""
    root = init_repo(
        tmp_path / "project",
        {
            "greet.py": "def greet(name):\n    return None\n",
            "plans/steps/03-add-greeting.md": "plan\n",
        },
    )
    before = scope.take_snapshot(root, root / "plans")
    (root / "greet.py").write_text("def greet(name):  # noqa\n    return 'Hi Ann'\n")
    return root, {
        "diff": scope.step_changes(before, root).diff,
        "changed_files": scope.step_changes(before, root).changed_files,
        "tamper_flags": scope.step_changes(before, root).tamper_flags,
    }


def review(step, reviewer: str, **kwargs):
    project, state = step
    ctx = make_ctx(project, reviewer=reviewer, state=state, settings=FAST, **kwargs)
    ctx.node = "independent_review"
    return stepkit_review(ctx)


def test_builtin_reviewer_reads_and_reports_with_severity_tags(step, messages_api):
    messages_api.reply_tool("read_file", {"path": "greet.py"})
    messages_api.reply_json({"findings": FINDINGS})

    result = review(step, "anthropic")

    assert result.fault is None
    assert result.review_report == RENDERED
    first = messages_api.requests[0]
    assert [t["name"] for t in first.body["tools"]] == [
        "read_file",
        "list_dir",
        "search",
        "run_command",
    ]
    sent = first.raw.decode("unicode_escape")
    for expected in (
        'greet("Ann") returns',
        "+    return 'Hi Ann'",
        "new # noqa in greet.py (+1)",
        "- greet.py",
    ):
        assert expected in sent
    review_schema = role_schema(first.body, "review")
    items = review_schema["properties"]["findings"]["items"]
    finding = review_schema["$defs"][items["$ref"].rsplit("/", 1)[1]]
    assert finding["properties"]["severity"]["enum"] == ["critical", "should_fix", "minor"]


def route(report: str, **state):
    """route_review after a review given as this text (read where it comes in)."""
    from stepkit.protocol.nodes.routes import route_review
    from stepkit.records import marked_findings

    findings = [f.model_dump() for f in marked_findings(report)]
    ctx = make_ctx(
        Path("."),
        state={
            "review_report": report,
            "review_findings": findings,
            "review_attempts": 0,
            "max_review_attempts": 1,
            **state,
        },
    )
    return route_review(ctx)


def target(outcome) -> str:
    """The node route_review's outcome leads to in the step-runner graph."""
    from stepkit.protocol.graphs import load_protocol_graph

    return load_protocol_graph().nodes["route_review"].routes[outcome.route]


@pytest.mark.parametrize(
    "report",
    [
        "No 🔴 critical findings.",
        "🟡 should fix: a.py: the 🔴 case is not logged",
        "Summary: nothing blocks; 🔴 none.",
    ],
)
def test_a_review_that_only_mentions_the_red_mark_routes_to_the_handoff(report):
    assert target(route(report)) == "write_handoff"


@pytest.mark.parametrize(
    "line", ["🔴 critical: a.py: bug", "- 🔴 a.py: bug", "  1. 🔴 a.py: bug", "* 🔴 a.py: bug"]
)
def test_a_line_starting_with_the_red_mark_after_list_markers_is_critical(line):
    outcome = route(f"Review:\n{line}\n🟢 minor: style")
    assert outcome.route == "🔴 critical findings"
    assert outcome.updates["fix_instructions"].splitlines()[1] == "🔴 critical: a.py: bug"


def test_a_structured_critical_finding_routes_back_to_the_coder(step, messages_api):
    messages_api.reply_json({"findings": FINDINGS})
    report = review(step, "anthropic").review_report

    outcome = route(report)

    assert target(outcome) == "implement"
    instructions = outcome.updates["fix_instructions"]
    assert "greet('Ann') returns 'Hi Ann'" in instructions and "no docstring" not in instructions


def test_findings_that_are_not_critical_never_route_back(step, messages_api):
    messages_api.reply_json(
        {
            "findings": [
                {**FINDINGS[0], "severity": "should_fix", "problem": "🔴 mark inside the text"}
            ]
        }
    )
    report = review(step, "anthropic").review_report
    assert report.startswith("🟡 should fix") and route(report).route == "else"
    messages_api.reply_json({"findings": []})
    assert review(step, "anthropic").review_report == "No findings."


def test_the_reviewer_sees_the_gate_results_and_sweep_report_and_a_bounded_diff(step, messages_api):
    from stepkit.plugins.stages.documents import DIFF_CHARS

    project, state = step
    huge = state["diff"] + "".join(f"+line {i}\n" for i in range(40_000))
    gates = [{"name": "tests", "status": "fail", "command": "pytest -q", "exit_code": 1}]
    messages_api.reply_json({"findings": []})

    review(
        (
            project,
            {
                **state,
                "diff": huge,
                "gates": gates,
                "edge_case_report": "punted: unicode names (step 4)",
            },
        ),
        "anthropic",
    )

    body = messages_api.requests[0].body
    sent = body["messages"][0]["content"][1]["text"]  # after the plan, the cached prefix
    assert "tests: FAIL (`pytest -q`, exit 1" in sent
    assert "punted: unicode names (step 4)" in sent
    assert len(huge) > 200_000 and len(sent) < DIFF_CHARS + 10_000


def test_builtin_reviewer_model_fault_is_a_fault_not_findings(step, messages_api):
    result = review(step, "anthropic")  # nothing queued: HTTP 400, not retried
    assert result.review_report == ""
    assert result.fault.startswith("LLM fault in node independent_review")


def script(project, body: str) -> str:
    path = project / "review.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return "command:./review.sh"


def test_command_reviewer_report_is_its_output(step):
    body = f"cat > /dev/null\nprintf '%s\\n' \"{REPORT}\"\n"
    result = review(step, script(step[0], body))
    assert result.fault is None
    assert result.review_report == REPORT


def test_command_reviewer_gets_the_review_prompt_on_stdin(step, tmp_path):
    seen = tmp_path / "prompt.txt"
    result = review(step, script(step[0], f"cat > {shlex.quote(str(seen))}\necho 'No findings.'\n"))
    assert result.review_report == "No findings."
    prompt = seen.read_text()
    for expected in (
        "🔴 critical",
        "## Acceptance criteria",
        "+    return 'Hi Ann'",
        "new # noqa in greet.py (+1)",
    ):
        assert expected in prompt


@pytest.mark.parametrize(
    "body, fault",
    [
        ("echo '🔴 critical: everything'\nexit 1\n", "the reviewer exited with code 1"),
        (
            "echo '🔴 critical: half a review'\nkill -9 $$\n",
            "the reviewer was killed by signal SIGKILL",
        ),
        ("exit 0\n", "the reviewer printed no report"),
    ],
)
def test_command_reviewer_failures_are_faults(step, body, fault):
    result = review(step, script(step[0], body))
    assert result.review_report == ""
    assert result.fault.startswith(fault)


def test_command_reviewer_timeout_is_a_fault(step):
    result = review(step, script(step[0], "echo '🔴 critical: x'\nsleep 30\n"), timeout=1)
    assert result.review_report == ""
    assert result.fault.startswith("the reviewer timed out after 1 s")


def test_a_reviewer_that_edits_the_tree_is_a_fault(step):
    from stepkit.pluginmanager import get_plugin_manager
    from stepkit.protocol.stages import review as review_stage
    from stepkit.records import StageFault

    project, state = step
    body = (
        f"{sys.executable} -c \"open('greet.py', 'a').write('# reviewed')\"\necho 'No findings.'\n"
    )
    ctx = make_ctx(project, reviewer=script(project, body), state=state, settings=FAST)
    ctx.node = "independent_review"
    ctx.pm = get_plugin_manager(builtins=["stepkit.plugins.coders.reviewer"])
    with pytest.raises(
        StageFault,
        match="the independent review is read-only but the project tree changed during it: greet.py",
    ):
        review_stage(ctx)


def test_preset_reviewer_reads_the_tool_result(step, fp):
    command = PRESETS["claude"].command(
        Call({}, True, step[0], step[0], answer_schema=ReviewAnswer)
    )
    fp.allow_unregistered(True)  # git, run for real
    fp.register(
        command,
        stdout=json.dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "result": REPORT,
                "session_id": "s1",
                "total_cost_usd": 0.05,
            }
        ),
    )
    result = review(step, "claude")
    assert result.fault is None
    assert result.review_report == REPORT


def test_preset_reviewer_error_is_a_fault(step, fp):
    command = PRESETS["claude"].command(
        Call({}, True, step[0], step[0], answer_schema=ReviewAnswer)
    )
    fp.allow_unregistered(True)
    fp.register(
        command,
        stdout=json.dumps(
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "result": "🔴 critical: API down",
            }
        ),
    )
    result = review(step, "claude")
    assert result.review_report == ""
    assert result.fault.startswith("claude reported: error_during_execution")


def test_specs_it_does_not_own(step):
    assert review(step, "somebody-else") is None
    assert review(step, "command:").fault == "--reviewer command: names no command"


@pytest.mark.parametrize(
    "text, findings",
    [
        ("🔴 critical findings: none\n🟡 should fix: a.py: slow", ["🟡 should fix: a.py: slow"]),
        (
            "### 🔴 Critical\n- greet.py: returns 'Hi Ann'\n- b.py: crashes on ''\n\n### 🟢 Minor\n- naming",
            [
                "🔴 critical: greet.py: returns 'Hi Ann'",
                "🔴 critical: b.py: crashes on ''",
                "🟢 minor: naming",
            ],
        ),
        (
            "## Critical\nNone.\n## Should fix\n1. a.py: slow\n## Summary\n- looks fine overall",
            ["🟡 should fix: a.py: slow"],
        ),
        (
            "The fix is critical for users, and it is done.\n**Critical**: greet.py: wrong greeting",
            ["🔴 critical: greet.py: wrong greeting"],
        ),
        (
            "Critical issues:\n- greet.py: wrong\n- None\nMinor: docstring",
            ["🔴 critical: greet.py: wrong", "🟢 minor: docstring"],
        ),
    ],
)
def test_a_text_reviewers_severity_is_read_from_its_finding_lines(step, text, findings):
    body = f"cat > /dev/null\ncat <<'EOF'\n{text}\nEOF\n"
    report = review(step, script(step[0], body)).review_report
    assert report.splitlines() == findings
    critical = [f for f in findings if f.startswith("🔴")]
    assert route(report).route == ("🔴 critical findings" if critical else "else")


def test_the_claude_and_codex_reviewers_are_asked_for_structured_findings(step, fp):
    from stepkit.plugins.coders.presets.base import Call

    project = step[0]
    claude = PRESETS["claude"].command(Call({}, True, project, project, answer_schema=ReviewAnswer))
    assert "--json-schema '" in claude and '"findings"' in claude and '"title"' not in claude
    coding = PRESETS["claude"].command(Call({}, False, project, project))
    assert "--json-schema" not in coding
    codex = PRESETS["codex"].command(Call({}, True, project, project, answer_schema=ReviewAnswer))
    schema_file = project / "answer-schema.json"
    assert f"--output-schema {shlex.quote(str(schema_file))} " in codex
    assert json.loads(schema_file.read_text())["properties"]["findings"]["type"] == "array"
    # what claude answers with --json-schema: the findings in structured_output
    fp.allow_unregistered(True)
    fp.register(
        claude,
        stdout=json.dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "result": "Done.",
                "structured_output": {"findings": FINDINGS},
                "session_id": "s1",
                "total_cost_usd": 0.05,
            }
        ),
    )
    assert review(step, "claude").review_report == RENDERED


def test_the_codex_reviewers_structured_answer_is_its_last_message(step, fp):
    fp.allow_unregistered(True)
    events = [
        {"type": "thread.started", "thread_id": "t1"},
        {
            "type": "item.completed",
            "item": {"type": "agent_message", "text": json.dumps({"findings": FINDINGS})},
        },
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 5}},
    ]
    fp.register(["codex", "exec", fp.any()], stdout="\n".join(map(json.dumps, events)))
    assert review(step, "codex").review_report == RENDERED


def test_the_aider_reviewers_report_is_its_findings_once(step, tmp_path, monkeypatch):
    """A review that names a file makes aider add it to the chat and ask again
    (unlogged, as the error_after_reply transcript shows); the model answers
    a second time.  The report is the last answer's findings, once."""
    recorded = json.loads(
        (
            Path(__file__).parents[1] / "fixtures" / "transcripts" / "aider-0.86.2" / "review.json"
        ).read_text()
    )
    again = (
        "> greet.py  \n> Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n\n"
        "🟡 greet.py: greet() has no test of its own.\n🟢 greet.py: fine otherwise.\n\n"
        "> Tokens: 2.1k sent, 40 received.\nCost: $0.0050 message, $0.0096 session.  \n"
    )
    (tmp_path / "history.md").write_text(recorded["scratch_files"]["chat.history.md"] + again)
    (tmp_path / "output.txt").write_text(recorded["output"])
    fake = (
        tmp_path / "bin" / "aider"
    )  # writes its chat history where it is told to, prints its output
    fake.parent.mkdir()
    fake.write_text(
        f"#!{sys.executable}\nimport shutil, sys\n"
        "at = sys.argv.index('--chat-history-file') + 1\n"
        f"shutil.copyfile({str(tmp_path / 'history.md')!r}, sys.argv[at])\n"
        f"print(open({str(tmp_path / 'output.txt')!r}).read())\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    result = review(step, "aider")
    assert result.fault is None
    assert result.review_report.splitlines() == [
        "🟡 should fix: greet.py: greet() has no test of its own.",
        "🟢 minor: greet.py: fine otherwise.",
    ]
