"""The step-runner's routers: pure functions of the state, one label per edge."""

from pathlib import Path

import pytest

from stepkit.config import Config
from stepkit.protocol.nodes import endings, routes, verify
from stepkit.protocol.state import step_state
from stepkit.records import GateResult, StageContext, TamperFlag, marked_findings
from stepkit.workspace.store import adhoc_dir


def ctx(state, tmp_path=Path("."), stage_nodes=None, **switches):
    """A router's context; ``stage_nodes``: the graph's stage nodes by stage,
    ``switches``: the environment switches the run started with."""
    settings = {"switches": switches, "stage_nodes": stage_nodes or {}}
    return StageContext(
        node="n",
        project_dir=tmp_path,
        plans_dir=tmp_path / "plans",
        state=state,
        settings=settings,
        config=Config(),
        pm=None,
    )


def gate(name, status, evidence="", command="cmd", summary=""):
    return GateResult(
        name=name,
        status=status,
        command=command,
        exit_code=0 if status == "pass" else 1,
        evidence=evidence,
        summary=summary,
    ).model_dump()


def test_route_staleness_asks_only_on_major_deviation():
    assert routes.route_staleness(ctx({"has_major_deviation": True})).route == "major deviation"
    assert routes.route_staleness(ctx({"has_major_deviation": False})).route == "else"


def test_step_autoapprove_skips_only_the_deviation_gate(monkeypatch):
    monkeypatch.setenv(
        "STEP_AUTOAPPROVE", "1"
    )  # the environment now is not what the run started with
    assert routes.route_staleness(ctx({"has_major_deviation": True})).route == "major deviation"
    outcome = routes.route_staleness(ctx({"has_major_deviation": True}, STEP_AUTOAPPROVE=True))
    assert outcome.route == "else"
    assert outcome.updates["deviation_autoapproved"] is True


@pytest.mark.parametrize(
    ("sentinel", "route", "reason"),
    [
        ("CODER_COMPLETE", "CODER_COMPLETE", None),
        ("CODER_REJECTED", "REJECTED / FAILED", None),
        ("CODER_FAILED", "REJECTED / FAILED", "coder fix-loop exhausted"),
        (None, "REJECTED / FAILED", "no recognizable sentinel in the coder's output"),
    ],
)
def test_route_coder_result(sentinel, route, reason):
    outcome = routes.route_coder_result(ctx({"coder_result": {"sentinel": sentinel}}))
    assert outcome.route == route
    assert outcome.updates.get("failure_reason") == reason
    # end_failure ends a run that records a rejection as STEP_REJECTED
    assert bool(outcome.updates.get("rejected_at")) == (sentinel == "CODER_REJECTED")


@pytest.mark.parametrize(
    ("exit_code", "reason"),
    [
        (3, "the coder exited 3 without a sentinel"),
        (0, "the coder reported an error without a sentinel"),
    ],
)
def test_a_coder_failure_read_from_the_exit_code_says_so(exit_code, reason):
    result = {"sentinel": "CODER_FAILED", "sentinel_inferred": True, "exit_code": exit_code}
    assert (
        routes.route_coder_result(ctx({"coder_result": result})).updates["failure_reason"] == reason
    )


def test_route_sweep(monkeypatch):
    assert routes.route_sweep(ctx({"changed_files": ["a"] * 4})).route == "else"
    assert routes.route_sweep(ctx({"changed_files": ["a"] * 5})).route == "5+ files or boundary"
    assert (
        routes.route_sweep(ctx({"changed_files": [], "needs_independent_review": True})).route
        == "5+ files or boundary"
    )
    flag = TamperFlag.in_changes(
        "deleted_test", "tests/test_a.py", "deleted test file: tests/test_a.py"
    )
    flagged = {"changed_files": ["a"], "tamper_flags": [flag.model_dump()]}
    assert routes.route_sweep(ctx(flagged)).route == "5+ files or boundary"
    assert routes.route_sweep(ctx(flagged, STEP_SKIP_REVIEW=True)).route == "else"
    monkeypatch.setenv(
        "STEP_SKIP_REVIEW", "1"
    )  # the environment now is not what the run started with
    assert routes.route_sweep(ctx({"changed_files": ["a"] * 9})).route == "5+ files or boundary"
    skipped = routes.route_sweep(ctx({"changed_files": ["a"] * 9}, STEP_SKIP_REVIEW=True))
    assert skipped.route == "else" and skipped.updates["review_skipped"] == "STEP_SKIP_REVIEW=1"


def reviewed(report: str, **state):
    """The state a review given as this text leaves (its findings read where it comes in)."""
    findings = [f.model_dump() for f in marked_findings(report)]
    return {"review_report": report, "review_findings": findings, **state}


def test_route_review_sends_only_critical_findings_back():
    state = {
        **reviewed("🔴 SQL injection in q()\n🟡 naming\n🟢 tests ok"),
        "review_attempts": 0,
        "max_review_attempts": 1,
    }
    outcome = routes.route_review(ctx(state))
    assert outcome.route == "🔴 critical findings"
    assert "SQL injection" in outcome.updates["fix_instructions"]
    assert "naming" not in outcome.updates["fix_instructions"]
    assert outcome.updates["review_attempts"] == 1


def test_route_review_budget_and_faults_never_spend_a_fix():
    spent = reviewed("🔴 bug", review_attempts=1, max_review_attempts=1)
    assert routes.route_review(ctx(spent)).route == "else"
    fault = reviewed(
        "🔴 looks like a finding but the reviewer crashed",
        critique_fault="timeout",
        review_attempts=0,
        max_review_attempts=1,
    )
    outcome = routes.route_review(ctx(fault, stage_nodes={"review": ["critique"]}))  # any node id
    assert outcome.route == "else"
    assert "review_attempts" not in outcome.updates
    assert routes.route_review(ctx(reviewed("🟡 nit", review_attempts=0))).route == "else"


def test_fix_loop_gate_spends_the_budget_on_the_first_failing_gate():
    state = {
        "gates": [
            gate("lint", "pass"),
            gate("build", "fail", "error: E1"),
            gate("tests", "fail", "FAILED t"),
        ],
        "fix_attempts": 0,
        "max_fix_attempts": 2,
    }
    outcome = verify.fix_loop_gate(ctx(state))
    assert outcome.route == "budget left"
    assert outcome.updates["fix_attempts"] == 1
    assert "build gate failed" in outcome.updates["fix_instructions"]
    assert "minimal fix" in outcome.updates["fix_instructions"]


def test_fix_loop_gate_stops_when_the_budget_is_spent():
    state = {
        "gates": [gate("tests", "fail", "FAILED a")],
        "fix_attempts": 2,
        "max_fix_attempts": 2,
        "last_failure_signature": "something else",
    }
    outcome = verify.fix_loop_gate(ctx(state))
    assert outcome.route == "budget spent"
    assert "2 of 2" in outcome.updates["failure_reason"]


def test_fix_loop_gate_stops_at_once_when_a_fix_made_no_progress():
    failing = [
        gate("tests", "fail", "FAILED tests/test_a.py::test_x - assert 1 == 2", summary="1 failed")
    ]
    first = verify.fix_loop_gate(ctx({"gates": failing, "fix_attempts": 0, "max_fix_attempts": 5}))
    assert first.route == "budget left"
    again = verify.fix_loop_gate(
        ctx(
            {
                "gates": failing,
                "fix_attempts": 1,
                "max_fix_attempts": 5,
                "last_failure_signature": first.updates["last_failure_signature"],
            }
        )
    )
    assert again.route == "budget spent"
    assert again.updates["failure_reason"].startswith("no progress")


def test_gates_report_never_says_passed_for_a_gate_that_did_not_run():
    state = {"gates": [gate("format", "pass"), gate("lint", "not_run", command=None)]}
    lines = endings.gates_report(step_state(state))
    assert any("lint: NOT RUN" in line and "NOT evidence" in line for line in lines)
    assert any(line.startswith("- build: NOT RUN") for line in lines)
    assert not any("lint" in line and "PASS" in line for line in lines)


def test_note_llm_fault_keeps_a_short_first_paragraph():
    outcome = routes.note_llm_fault(
        ctx({"fault_note": "HTTP 529 overloaded_error at orient after 3 attempts.\n\nstack..."})
    )
    assert outcome.updates["fault_note"] == "HTTP 529 overloaded_error at orient after 3 attempts."


def test_revise_from_choice_turns_free_text_into_fix_instructions():
    outcome = routes.revise_from_choice(ctx({"revision_choice": "rename slugify to slug"}))
    assert (
        outcome.updates["fix_instructions"]
        == "Revision requested at the approval gate: rename slugify to slug"
    )


def test_lint_reuses_the_coders_run_with_the_formatters_tree_hash(tmp_path, monkeypatch):
    """The formatter's run hashes the tree before and after; lint's reuse
    check takes that hash instead of hashing the same tree again."""
    from stepkit.config import Commands
    from stepkit.pluginmanager import get_plugin_manager
    from stepkit.workspace import gates

    (tmp_path / "app.py").write_text("x = 1\n")
    calls = []
    real_hash = gates.tree_hash
    real_listing = gates.listing
    monkeypatch.setattr(
        gates, "tree_hash", lambda project: calls.append(project) or real_hash(project)
    )
    monkeypatch.setattr(
        gates, "listing", lambda project: calls.append(project) or real_listing(project)
    )
    lint_cmd = 'python -c "raise SystemExit(1)"'  # would fail if it ran
    coder_lint = GateResult(
        name="lint",
        status="pass",
        command=lint_cmd,
        exit_code=0,
        tree_hash=real_hash(tmp_path),
        evidence="clean",
    )
    context = StageContext(
        node="verify_format_lint",
        project_dir=tmp_path,
        plans_dir=tmp_path / "plans",
        state={"coder_result": {"gates": [coder_lint.model_dump()]}},
        settings={},
        config=Config(commands=Commands(format="python -c pass", lint=lint_cmd)),
        pm=get_plugin_manager(),
        adhoc_dir=adhoc_dir(tmp_path),
    )
    outcome = verify.verify_format_lint(context)
    lint = GateResult.model_validate(outcome.updates["gates"][1])
    assert outcome.route == "pass" and lint.evidence.startswith("[reused: same tree")
    assert len(calls) == 2  # the tree looked at before and after the formatter, not for lint
