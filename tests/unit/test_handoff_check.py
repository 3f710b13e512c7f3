"""check_handoff_text: schema, and Evidence agreeing with the recorded gates."""

import pytest

from stepkit.protocol.handoff.check import check_handoff_text
from stepkit.protocol.handoff.render import HANDOFF_SECTIONS, render_handoff
from stepkit.records import GateResult

GATES = [
    GateResult(name="format", status="pass", command="ruff format .", exit_code=0),
    GateResult(name="lint", status="pass", command="ruff check .", exit_code=0),
    GateResult(name="build", status="not_run"),
    GateResult(name="tests", status="fail", command="pytest -q", exit_code=1, evidence="1 failed"),
]


#: what an Evidence edited after stepkit rendered it adds to the problems
EDITED = "the Evidence section is not the one stepkit rendered: it was changed after rendering"


def handoff(summary="Did the step.", gates=GATES, result="partial"):
    return render_handoff(
        step=2, title="Two", result=result, prose={"summary": summary}, gates=gates
    )


#: a hand-written Evidence section, in a run or not: only stepkit writes it
NOT_RENDERED = (
    "the Evidence section was not rendered by stepkit (its stepkit-evidence marker is missing)"
)


def written(evidence: str, front="---\nstep: 2\ntitle: Two\nresult: complete\n---\n") -> str:
    """A hand-written handoff with the given Evidence body."""
    body = "".join(
        f"\n## {name}\n\n{evidence if name == 'Evidence' else 'None'}\n"
        for name in HANDOFF_SECTIONS
    )
    return front + body


def test_rendered_handoff_is_valid():
    assert check_handoff_text(handoff(), GATES) == []


@pytest.mark.parametrize(
    "front, problem",
    [
        ("", "frontmatter missing"),
        ("---\nresult: [unclosed\n---\n", "malformed frontmatter: did not find expected"),
        ("---\n- a list\n---\n", "malformed frontmatter: a YAML list, not a mapping"),
        ("---\nstep: 2\n---\n", "frontmatter has no 'result'"),
        ("---\nresult: done\n---\n", "frontmatter result is 'done'"),
    ],
)
def test_frontmatter_problems(front, problem):
    problems = [
        p
        for p in check_handoff_text(written("$ make\nexit code: 0", front=front), [])
        if p != NOT_RENDERED
    ]
    assert len(problems) == 1 and problems[0].startswith(problem), problems


GREEN = [*GATES[:3], GateResult(name="tests", status="pass", command="pytest -q", exit_code=0)]


@pytest.mark.parametrize("result", ["complete", "partial", "blocked"])
def test_each_result_is_accepted(result):
    assert check_handoff_text(handoff(result=result, gates=GREEN), GREEN) == []


def test_complete_is_refused_while_a_gate_failed_or_a_critical_finding_is_open():
    assert check_handoff_text(handoff(result="complete"), GATES) == [
        "result is complete but the tests gate failed: use partial"
    ]
    open_finding = render_handoff(
        step=2,
        title="Two",
        result="complete",
        prose={"summary": "x"},
        gates=GREEN,
        open_critical=["🔴 critical: a.py: path traversal"],
    )
    assert "- 🔴 critical: a.py: path traversal" in open_finding
    assert check_handoff_text(open_finding, GREEN) == [
        "result is complete but critical review findings are still open: use partial"
    ]
    partial = open_finding.replace("result: complete", "result: partial", 1)
    assert check_handoff_text(partial, GREEN) == []
    # outside a run, the failures Evidence names are enough
    assert "the tests gate failed" in " ".join(check_handoff_text(handoff(result="complete"), []))


def test_missing_duplicate_and_empty_sections():
    text = handoff().replace("## Deviations", "## Deviation")
    text = text.replace("## Notes for next step\n\nNone\n", "## Notes for next step\n\n")
    text += "\n## summary\n\nagain\n"
    problems = check_handoff_text(text, GATES)
    assert "missing section '## Deviations'" in problems
    assert (
        "section '## Notes for next step' is empty (write None when there is nothing)" in problems
    )
    assert "section '## summary' appears more than once" in problems
    assert len(problems) == 3


def test_section_names_are_case_insensitive_and_crlf_is_fine():
    text = handoff().replace("## Not completed", "## NOT COMPLETED").replace("\n", "\r\n")
    assert check_handoff_text(text, GATES) == []


def test_headings_inside_code_fences_do_not_count():
    text = handoff(summary="```\n## Evidence\n```")
    assert check_handoff_text(text, GATES) == []
    only_fenced = written("$ make\nexit code: 0\n```\n## Summary\n```").replace(
        "\n## Summary\n\nNone\n", "\n", 1
    )
    assert check_handoff_text(only_fenced, []) == ["missing section '## Summary'", NOT_RENDERED]


def test_every_gate_that_ran_needs_its_command_and_exit_code():
    text = handoff().replace("$ pytest -q", "$ pytest")
    assert check_handoff_text(text, GATES) == [
        EDITED,
        "Evidence lacks the tests gate's command: pytest -q",
    ]
    text = handoff().replace("$ ruff check .\nexit code: 0", "$ ruff check .\nresult: ok")
    assert check_handoff_text(text, GATES) == [
        EDITED,
        "Evidence lacks the lint gate's exit code (0) next to its command",
    ]


def test_exit_code_must_be_the_recorded_one_and_next_to_its_own_command():
    text = handoff().replace("$ pytest -q\nexit code: 1", "$ pytest -q\nexit code: 0")
    assert check_handoff_text(text, GATES) == [
        EDITED,
        "Evidence lacks the tests gate's exit code (1) next to its command",
    ]


def test_timed_out_gate_has_exit_code_none():
    gates = [*GATES[:3], GateResult(name="tests", status="timeout", command="pytest -q")]
    text = handoff(gates=gates)
    assert check_handoff_text(text, gates) == []
    assert check_handoff_text(text.replace("exit code: none", "exit code: 0"), gates) != []


def test_not_run_gate_must_be_marked_not_run():
    text = (
        handoff()
        .replace("### build — NOT RUN", "### build")
        .replace("NOT RUN — this is NOT evidence that build passed", "skipped")
    )
    assert check_handoff_text(text, GATES) == [
        EDITED,
        "Evidence does not mark the build gate as NOT RUN (it did not run)",
    ]


def test_not_run_gate_described_as_passing_anywhere_is_a_problem():
    problems = check_handoff_text(handoff(summary="All good: the build passed."), GATES)
    assert problems == [
        "the build gate did not run but the handoff says it passed: All good: the build passed."
    ]


def test_negated_or_fenced_mentions_are_not_claims():
    summary = "The build did not run, so nothing says it passed.\n```\nbuild passed\n```"
    assert check_handoff_text(handoff(summary=summary), GATES) == []


def test_without_recorded_gates_evidence_is_checked_for_shape():
    assert check_handoff_text(written("$ make test\nexit code: 0"), []) == [NOT_RENDERED]
    assert check_handoff_text(written("None"), []) == [
        NOT_RENDERED,
        "Evidence records no gate: list each command with its exit code, or NOT RUN",
    ]
    lying = written("tests: NOT RUN (no command)").replace(
        "## Summary\n\nNone", "## Summary\n\nAll tests pass."
    )
    assert check_handoff_text(lying, []) == [
        NOT_RENDERED,
        "the tests gate did not run but the handoff says it passed: All tests pass.",
    ]


def test_stepkit_check_handoff_is_collect_all_with_project_rules(tmp_path):
    from stepkit.hookspecs import hookimpl
    from stepkit.pluginmanager import get_plugin_manager

    class ProjectRule:
        @hookimpl
        def stepkit_check_handoff(self, path, text, gates):
            return [] if "JIRA-" in text else [f"{path.name}: no ticket id"]

    pm = get_plugin_manager(builtins=["stepkit.plugins.stages.check_handoff"])
    pm.register(ProjectRule(), name="stepconf")
    path = tmp_path / "02-two.md"
    text = handoff().replace("result: partial", "result: maybe")

    answers = pm.hook.stepkit_check_handoff(path=path, text=text, gates=GATES)

    problems = sorted(p for answer in answers for p in answer)
    assert problems == [
        "02-two.md: no ticket id",
        "frontmatter result is 'maybe'; expected complete, partial or blocked",
    ]
