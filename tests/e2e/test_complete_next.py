"""STEP_COMPLETE's last lines: the commit command carries the whole summary
(its subject cut at a word's end, never mid-word), and the plan's next step
with whether it can run."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.e2e import HANDOFF, make_project

LONG = (
    "Added calc.mul, which multiplies two numbers, with tests for negative numbers, "
    "zero and large integers; the README's usage section shows it"
)


def test_the_commit_command_keeps_the_whole_summary_and_the_next_step_is_named(tmp_path):
    project = make_project(tmp_path)
    engine = project.script(write_handoff={**HANDOFF, "step_summary": LONG})
    paused = project.run(engine=engine)
    assert paused.outcome == "PAUSED", paused.stderr
    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE", done.stderr
    lines = done.output.splitlines()
    command = next(line for line in lines if line.startswith("  git add -- "))
    env = project.env(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    ran = subprocess.run(
        command, shell=True, cwd=project.root, env=env, capture_output=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    message = project.git("log", "-1", "--format=%B")
    subject, *body = message.strip().split("\n\n")
    assert len(subject) <= 72 and subject.endswith("…")
    assert LONG.startswith(subject[:-1].rstrip()) and LONG[len(subject) - 1] in " ,;"
    assert body == [LONG, "Step 1: Add mul"]
    assert lines[-1] == "Next step: 2 — Add div (ready: stepkit run --step 2)"


@pytest.mark.slow
def test_the_next_step_is_named_blocked_when_its_dependency_is_not_this_step(tmp_path):
    project = make_project(tmp_path)
    step2 = project.plans / "steps" / "02-div.md"
    step2.write_text(step2.read_text().replace("depends_on: [1]", "depends_on: [1, 3]"))
    step3 = project.plans / "steps" / "03-pow.md"
    step3.write_text(step3.read_text().replace("depends_on: [2]", "depends_on: []"))
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "div after pow")
    assert project.run().outcome == "PAUSED"
    done = project.resume("approve")
    assert done.output.splitlines()[-1] == (
        "Next step: 2 — Add div (blocked: step 3 (Add pow): no handoff)"
    )
