"""End to end: every route of the step-runner diagram, through the real CLI.

Real processes, real files, a real git repo; gates are real commands; the
coder and the reviewer are small scripts run as command coders; the LLM
nodes use the scripted engine here (test_e2e_anthropic.py runs the real SDK
against a loopback Messages API).  A session that runs this whole module
fails when any edge of the step-runner graph was never traversed by its
tests (the ``covers_every_edge`` mark: tests/support/edge_coverage.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import (
    CALC,
    DEVIATION,
    GOOD_MUL,
    HANDOFF,
    PY,
    WRONG_MUL,
    sh,
)

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.covers_every_edge]

COMPLETE = {"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"}


def finish(project, result):
    """Answer the final gate with approve and return the final result."""
    assert result.code == 5, result.stderr + result.stdout
    assert result.data["pending"]["node"] == "gate_user_review"
    return project.resume("approve")


# -- the main path -----------------------------------------------------------


def test_happy_path_pauses_at_the_final_gate_then_completes(project):
    paused = project.run()
    assert paused.code == 5 and paused.outcome == "PAUSED"
    assert paused.data["pending"]["options"] == ["approve", "revise", "reject", "abort"]
    question = paused.data["pending"]["question"]
    assert (
        "- C1: `python check.py` passes." in question and "- - " not in question
    )  # one bullet each
    assert project.plan_status(1) == "in-progress"  # complete only on approval
    assert not project.handoff(1).exists()  # so is the handoff: a draft in the run dir
    assert Path(paused.data["handoff_draft"]).is_file()

    done = project.resume("approve")
    assert done.code == 0 and done.outcome == "STEP_COMPLETE"
    assert done.data["handoff"] == str(project.handoff(1)) and done.data["handoff_draft"] is None
    assert done.output.splitlines()[0] == "STEP_COMPLETE"
    assert "- tests: PASS" in done.output and "- format: NOT RUN" in done.output
    assert "Fix attempts: 0 of 2" in done.output
    assert project.plan_status(1) == "complete"
    notes = (project.plans / "NOTES.md").read_text()
    assert notes.startswith("# Notes\n\n- calc is a tiny module.\n")
    assert "calc functions take two numbers" in notes
    later = (project.plans / "steps" / "03-pow.md").read_text()
    assert "Division by zero must raise ValueError." in later.split("## Edge cases", 1)[1]
    assert {g["name"]: g["status"] for g in done.data["gates"]} == {
        "format": "not_run",
        "lint": "pass",
        "build": "pass",
        "tests": "pass",
    }
    # what to do next: stepkit never commits; the output names the files and the command
    tail = done.output.split("Files the step changed (stepkit never commits):\n", 1)[1].splitlines()
    assert tail[:5] == [
        "- calc.py",
        "- plans/steps/01-mul.md",
        "- plans/handoffs/01-mul.md",
        "- plans/steps/03-pow.md",
        "- plans/NOTES.md",
    ], tail
    command = tail[6]
    assert command.startswith(
        "  git add -- calc.py plans/steps/01-mul.md plans/handoffs/01-mul.md "
        "plans/steps/03-pow.md plans/NOTES.md && git commit -m "
    )
    assert tail[-1] == "Next step: 2 — Add div (ready: stepkit run --step 2)"
    committed = subprocess.run(
        command.strip(),
        shell=True,
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
        env=project.env(
            GIT_AUTHOR_NAME="t",
            GIT_AUTHOR_EMAIL="t@t",
            GIT_COMMITTER_NAME="t",
            GIT_COMMITTER_EMAIL="t@t",
        ),
    )
    assert committed.returncode == 0, committed.stderr
    left = subprocess.run(
        ["git", "status", "--porcelain", "--", "calc.py", "plans"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert left == ""


def test_a_plan_that_goes_missing_after_the_start_fails_at_resolve(project):
    # a step that cannot be resolved is a usage error before any run starts
    # (test_run_usage_errors.py); once the run started, resolve_step fails it
    (project.root / "stepconf.py").write_text(
        "import pathlib\nimport stepkit\n\n\n@stepkit.hookimpl\n"
        "def stepkit_node_started(run_id, node, kind, state):\n"
        "    if node == 'resolve_step':\n"
        "        for plan in pathlib.Path('plans/steps').glob('01-*.md'):\n"
        "            plan.unlink()\n"
    )
    result = project.run("--step", "1")
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "step 1 not found" in result.output
    assert project.coder_calls() == 0


@pytest.mark.parametrize(
    "prompt, chosen",
    [
        ("carry on with the plan", "Chosen: the first pending step (no step given in the prompt)"),
        ("step 1 please", "Chosen: named in the prompt ('step 1 please')"),
    ],
)
def test_the_output_says_which_step_was_chosen_and_why(project, prompt, chosen):
    done = finish(project, project.run(prompt))
    assert done.outcome == "STEP_COMPLETE"
    assert done.output.splitlines()[1:3] == ["Step: 1 — Add mul", chosen]


# -- resolve and gate_blocked --------------------------------------------------


def test_unsatisfied_dependency_pauses_then_no_blocks(project):
    paused = project.run("--step", "2")
    assert paused.code == 5 and paused.data["pending"]["node"] == "gate_blocked"
    assert "step 1 (Add mul): no handoff" in paused.data["pending"]["question"]
    assert project.plan_status(2) == "pending"  # not started while blocked
    blocked = project.resume("no")
    assert blocked.code == 3 and blocked.outcome == "STEP_BLOCKED"
    assert "step 1 (Add mul): no handoff" in blocked.output
    assert project.plan_status(2) == "pending"
    assert project.coder_calls() == 0


def test_blocked_step_proceeds_on_a_pre_answered_yes(project):
    result = project.run("--step", "2", "--answer", "gate_blocked=yes")
    assert result.code == 5 and result.data["pending"]["node"] == "gate_user_review"
    assert project.plan_status(2) == "in-progress"


def test_the_final_gate_cannot_be_pre_answered(project):
    result = project.run("--answer", "gate_user_review=approve", json_out=False)
    assert result.code == 2
    assert "Traceback" not in result.stderr
    assert not (store_dir(project.root) / "runs").exists() or not any(
        (store_dir(project.root) / "runs").iterdir()
    )


# -- orient and the deviation gate --------------------------------------------


def test_major_deviation_abort_rejects(project):
    paused = project.run(engine=project.script(orient=DEVIATION))
    assert paused.data["pending"]["node"] == "gate_deviation"
    assert "calc.py was renamed" in paused.data["pending"]["question"]
    rejected = project.resume("abort")
    assert rejected.code == 4 and rejected.outcome == "STEP_REJECTED"
    assert "deviation gate" in rejected.output and "calc.py was renamed" in rejected.output
    assert project.coder_calls() == 0


def test_major_deviation_proceed_implements(project):
    paused = project.run(engine=project.script(orient=DEVIATION))
    assert paused.data["pending"]["node"] == "gate_deviation"
    assert finish(project, project.resume("proceed")).outcome == "STEP_COMPLETE"


def test_free_text_at_the_deviation_gate_reaches_the_coder_as_guidance(project):
    project.run(
        "--answer", "gate_deviation=keep the name calc.py", engine=project.script(orient=DEVIATION)
    )
    assert "keep the name calc.py" in project.coder_prompt(0)


def test_step_autoapprove_skips_the_deviation_gate_only(project):
    result = project.run(
        engine=project.script(orient=DEVIATION), env=project.env(STEP_AUTOAPPROVE="1")
    )
    assert result.data["pending"]["node"] == "gate_user_review"


def test_orient_fault_fails_with_a_pipeline_fault_note(project):
    result = project.run(
        engine=project.script(orient={"fault": "HTTP 529 overloaded_error after 3 attempts"})
    )
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "Pipeline fault: HTTP 529 overloaded_error after 3 attempts" in result.output
    assert project.coder_calls() == 0


ORIENT_THAT_WRITES = """import stepkit


@stepkit.hookimpl
def stepkit_orient(ctx):
    (ctx.project_dir / "calc.py").write_text("tampered = True\\n")
    return {"plan_summary": "s", "implementation_brief": "b", "staleness_report": "clean",
            "has_major_deviation": False, "deviation_summary": ""}
"""


def test_an_orient_that_writes_is_a_pipeline_fault_whoever_implements_it(project):
    (project.root / "stepconf.py").write_text(ORIENT_THAT_WRITES)
    result = project.run()
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert (
        "Pipeline fault: orient is read-only but the project tree changed during it: calc.py"
        in result.output
    )
    assert project.coder_calls() == 0


# -- the coder ----------------------------------------------------------------


def test_coder_crash_fails_at_once_and_is_never_retried(project):
    project.coder_actions({"write": {"calc.py": "half-edited"}, "kill": True})
    result = project.run()
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "crashed" in result.output
    assert project.coder_calls() == 1


def test_coder_rejected_ends_rejected(project):
    project.coder_actions(
        {"say": "plan rejected at my approval gate", "sentinel": "CODER_REJECTED"}
    )
    result = project.run()
    assert result.code == 4 and result.outcome == "STEP_REJECTED"
    assert "Rejected at: the coder's own plan-approval gate" in result.output
    assert "plan rejected at my approval gate" in result.output


def test_coder_failed_ends_failed_with_its_text(project):
    project.coder_actions(
        {"say": "could not make tests pass", "sentinel": "CODER_FAILED", "exit": 1}
    )
    result = project.run()
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "coder fix-loop exhausted" in result.output
    assert "could not make tests pass" in result.output


def test_coder_edits_to_the_plan_repo_are_undone_and_recorded(project):
    original = (project.plans / "steps" / "02-div.md").read_bytes()
    project.coder_actions(
        {
            "write": {"calc.py": GOOD_MUL, "plans/steps/02-div.md": "rewritten"},
            "sentinel": "CODER_COMPLETE",
        }
    )
    result = finish(project, project.run())
    assert result.outcome == "STEP_COMPLETE"
    assert (project.plans / "steps" / "02-div.md").read_bytes() == original
    assert "plans/steps/02-div.md" in project.handoff(1).read_text().split("## Deviations", 1)[1]


# -- gates and the fix loop ----------------------------------------------------


def test_lint_failure_is_fixed_within_the_budget(project):
    project.coder_actions(
        {"write": {"calc.py": GOOD_MUL + "# LINTFAIL\n"}, "sentinel": "CODER_COMPLETE"}, COMPLETE
    )
    done = finish(project, project.run())
    assert done.outcome == "STEP_COMPLETE"
    assert "Fix attempts: 1 of 2" in done.output
    assert "lint gate failed" in project.coder_prompt(1)


def test_build_failure_goes_to_the_fix_loop(project):
    project.coder_actions(
        {"write": {"calc.py": "def mul(:\n"}, "sentinel": "CODER_COMPLETE"}, COMPLETE
    )
    done = finish(project, project.run())
    assert done.outcome == "STEP_COMPLETE"
    assert "build gate failed" in project.coder_prompt(1)


def test_fix_budget_spent_fails_with_the_last_test_output(project):
    # each attempt fails differently, so only the budget stops the loop
    project.coder_actions(
        *(
            {
                "write": {"calc.py": CALC + f"\n\ndef mul(a, b):\n    return a * b + {i + 1}\n"},
                "sentinel": "CODER_COMPLETE",
            }
            for i in range(3)
        )
    )
    result = project.run("--set", "max_fix_attempts=1")
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "fix budget spent: 1 of 1" in result.output
    assert "mul(2, 3) == 8, expected 6" in result.output
    assert project.coder_calls() == 2


def test_a_fix_that_changes_nothing_stops_the_loop_as_no_progress(project):
    project.coder_actions({"write": {"calc.py": WRONG_MUL}, "sentinel": "CODER_COMPLETE"})
    result = project.run("--set", "max_fix_attempts=5")
    assert result.outcome == "STEP_FAILED"
    assert "no progress" in result.output
    assert project.coder_calls() == 2


@pytest.mark.parametrize(
    "gate, variable", [("lint", "LINT_CMD"), ("build", "BUILD_CMD"), ("tests", "TEST_CMD")]
)
def test_an_environment_fault_in_a_gate_ends_the_run_without_the_fix_loop(project, gate, variable):
    # a program that is not there is known before the coder is called (stepkit.workspace.precheck)
    result = project.run(env=project.env(**{variable: "no-such-tool-4e1 --check"}))
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert (
        f"Reason: Environment fault: {gate}: `no-such-tool-4e1` (of `no-such-tool-4e1 --check`) "
        "is not on the gates' PATH" in result.output
    )
    assert project.coder_calls() == 0


@pytest.mark.parametrize(
    "gate, variable", [("lint", "LINT_CMD"), ("build", "BUILD_CMD"), ("tests", "TEST_CMD")]
)
def test_an_environment_fault_the_gate_finds_ends_the_run_without_the_fix_loop(
    project, gate, variable
):
    """The program starts (the pre-check passes it); the tool it runs is missing."""
    command = sh(PY, "-m", "no_such_tool_4e1")
    result = project.run(env=project.env(**{variable: command}))
    assert result.code == 1 and result.outcome == "STEP_FAILED", result.stdout
    assert f"Reason: Environment fault: {gate}:" in result.output
    assert "no_such_tool_4e1" in result.output
    assert project.coder_calls() == 1 and result.data["fix_attempts"] == 0


# -- sweep and review ---------------------------------------------------------


def test_sweep_fault_is_flagged_in_the_handoff_and_the_step_goes_on(project):
    done = finish(
        project, project.run(engine=project.script(edge_case_sweep={"fault": "sweep engine down"}))
    )
    assert done.outcome == "STEP_COMPLETE"
    assert "PIPELINE-FAULT: edge-case sweep did not run" in project.handoff(1).read_text()


def five_files(extra=""):
    files = {"calc.py": GOOD_MUL}
    files.update({f"helpers/h{i}.py": f"X = {i}{extra}\n" for i in range(4)})
    return {"write": files, "sentinel": "CODER_COMPLETE"}


def test_five_changed_files_get_a_review_and_critical_findings_go_back(project):
    project.coder_actions(five_files(), five_files(" + 0"))
    project.reviewer_reports("🔴 mul ignores floats\n🟡 naming", "🟢 fixed")
    done = finish(project, project.run())
    assert done.outcome == "STEP_COMPLETE"
    assert "mul ignores floats" in project.coder_prompt(1)
    assert "naming" not in project.coder_prompt(1)


def test_reviewer_failing_twice_is_a_fault_not_findings(project):
    project.coder_actions(five_files())
    project.reviewer_reports("CRASH")
    done = finish(project, project.run())
    assert done.outcome == "STEP_COMPLETE"
    assert project.coder_calls() == 1  # a fault never spends a fix attempt
    assert "PIPELINE-FAULT: independent review did not run" in project.handoff(1).read_text()
    assert int((project.state_dir / "reviewer_calls").read_text()) == 2


def test_step_skip_review_never_reviews(project):
    project.coder_actions(five_files())
    project.reviewer_reports("🔴 would block")
    done = finish(project, project.run(env=project.env(STEP_SKIP_REVIEW="1")))
    assert done.outcome == "STEP_COMPLETE"
    assert not (project.state_dir / "reviewer_calls").exists()


# -- handoff ----------------------------------------------------------------

TICKET_RULE = """import stepkit


@stepkit.hookimpl
def stepkit_check_handoff(path, text, gates):
    return [] if "TICKET-7" in text else ["the handoff must name TICKET-7"]
"""


def test_handoff_failing_its_check_is_rewritten_once(project):
    (project.root / "stepconf.py").write_text(TICKET_RULE)
    answers = project.script(
        write_handoff=[HANDOFF, {**HANDOFF, "summary": "Added calc.mul (TICKET-7)."}]
    )
    done = finish(project, project.run(engine=answers))
    assert done.outcome == "STEP_COMPLETE"
    assert "TICKET-7" in project.handoff(1).read_text()


def test_handoff_failing_its_check_twice_fails(project):
    (project.root / "stepconf.py").write_text(TICKET_RULE)
    result = project.run()
    assert result.code == 1 and result.outcome == "STEP_FAILED"
    assert "handoff failed validation twice" in result.output
    assert "TICKET-7" in result.output


def test_handoff_writer_fault_fails_with_a_pipeline_fault(project):
    result = project.run(engine=project.script(write_handoff={"fault": "invalid output twice"}))
    assert result.code == 1 and "Pipeline fault: invalid output twice" in result.output


# -- the final gate -------------------------------------------------------------


def test_revise_asks_what_should_change_then_reimplements(project):
    project.coder_actions(COMPLETE, COMPLETE)
    paused = project.run()
    assert paused.data["pending"]["node"] == "gate_user_review"
    asked = project.resume("revise")
    assert asked.code == 5 and asked.data["pending"]["node"] == "get_revision"
    again = project.resume("add a docstring to mul")
    assert again.data["pending"]["node"] == "gate_user_review"
    assert "add a docstring to mul" in project.coder_prompt(1)
    assert project.resume("approve").outcome == "STEP_COMPLETE"


def test_free_text_at_the_final_gate_becomes_fix_instructions(project):
    project.coder_actions(COMPLETE, COMPLETE)
    project.run()
    again = project.resume("please also handle floats")
    assert again.data["pending"]["node"] == "gate_user_review"
    assert (
        "Revision requested at the approval gate: please also handle floats"
        in project.coder_prompt(1)
    )


@pytest.mark.parametrize("answer", ["reject", "abort", "Reject"])
def test_reject_at_the_final_gate_ends_rejected(project, answer):
    project.run()
    done = project.resume(answer)
    assert done.code == 4 and done.outcome == "STEP_REJECTED"
    assert "Rejected at: the final approval" in done.output
    assert project.plan_status(1) != "complete"


@pytest.mark.parametrize("slip", ["aprove", "aprov", "revsie", "APROVE", "rejct", "abrot"])
def test_a_slip_of_an_option_at_the_final_gate_is_refused_and_the_run_stays_paused(project, slip):
    project.coder_actions(COMPLETE, COMPLETE)
    project.run()
    rounds = len(list(project.state_dir.glob("coder_prompt_*")))
    refused = project.resume(slip)
    assert refused.code == 2, refused.stderr + refused.stdout
    assert refused.stdout == "" and len(refused.stderr.strip().splitlines()) == 1
    assert "did you mean" in refused.stderr and "approve, revise, reject, abort" in refused.stderr
    assert len(list(project.state_dir.glob("coder_prompt_*"))) == rounds  # never sent to the coder
    assert project.resume("approve").outcome == "STEP_COMPLETE"


def test_a_slip_of_a_pre_answer_starts_no_run(project):
    refused = project.run("--answer", "gate_deviation=procede")
    assert refused.code == 2 and "did you mean proceed?" in refused.stderr
    assert not list(project.root.glob(".stepkit/runs/*"))


def test_no_environment_variable_answers_the_final_gate(project):
    env = project.env(STEP_AUTOAPPROVE="1", STEP_SKIP_REVIEW="1", CODER_AUTOAPPROVE="1")
    result = project.run(env=env)
    assert result.code == 5 and result.data["pending"]["node"] == "gate_user_review"
