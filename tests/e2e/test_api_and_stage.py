"""The Python API and ``stepkit stage``: the same stages without the graph."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import stepkit
from stepkit.protocol.stages import STAGES
from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, PY, command_coder, make_project


def stage(project, *args):
    cmd = [
        PY,
        "-m",
        "stepkit",
        "stage",
        *args,
        "--project-dir",
        str(project.root),
        "--engine",
        f"scripted:{project.script()}",
    ]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env=project.env(),
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def test_stage_orient_prints_the_structured_result_and_changes_nothing(tmp_path):
    project = make_project(tmp_path)
    before = (project.plans / "steps" / "01-mul.md").read_bytes()
    done = stage(project, "orient", "--step", "1", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["staleness_report"] == "clean"
    assert result["has_major_deviation"] is False
    assert (project.plans / "steps" / "01-mul.md").read_bytes() == before
    assert project.git("status", "--porcelain") == ""


def test_stage_sweep_sees_the_work_tree_and_only_touches_later_edge_cases(tmp_path):
    project = make_project(tmp_path)
    (project.root / "calc.py").write_text(GOOD_MUL)
    step3 = project.plans / "steps" / "03-pow.md"
    before = step3.read_text()
    done = stage(project, "sweep", "--step", "1", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["applied_annotations"] == [
        {"step": 3, "edge_case": "Division by zero must raise ValueError."}
    ]
    after = step3.read_text()
    assert after.replace("- Division by zero must raise ValueError.\n", "") == before


def test_stage_review_reviews_the_diff_a_run_would(tmp_path):
    """Outside a run, the reviewer gets the project's changes as a run shows
    them: the plan repo left out, tampering with the tests flagged."""
    project = make_project(tmp_path)
    (project.root / "test_calc.py").write_text(
        "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"
    )
    project.git("add", "test_calc.py")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a test")
    (project.root / "calc.py").write_text(GOOD_MUL)
    (project.root / "test_calc.py").unlink()
    (project.plans / "steps" / "02-div.md").write_text("edited by hand\n")
    keep_prompt = project.state_dir / "keep_prompt.py"
    keep_prompt.write_text(
        "import pathlib, sys\n"
        f"pathlib.Path({str(project.state_dir / 'review_prompt.txt')!r}).write_text(sys.stdin.read())\n"
        "print('🟢 looks good')\n"
    )
    done = stage(
        project, "review", "--step", "1", "--reviewer", command_coder(PY, keep_prompt), "--json"
    )
    assert done.returncode == 0, done.stderr
    prompt = (project.state_dir / "review_prompt.txt").read_text()
    changed = prompt.split('<document title="Changed files">\n', 1)[1].split("\n</document>", 1)[0]
    assert changed.splitlines() == ["- calc.py", "- test_calc.py"]
    assert "- deleted test file: test_calc.py" in prompt
    diff = prompt.split('<document title="Diff">\n', 1)[1].split("</document>", 1)[0]
    assert "+def mul(a, b):" in diff and "edited by hand" not in diff and "02-div.md" not in diff


def test_stage_verify_runs_the_gates_and_fails_on_a_failing_gate(tmp_path):
    project = make_project(tmp_path)
    done = stage(project, "verify", "--step", "1")
    assert done.returncode == 1  # calc has no mul yet: the tests gate fails
    assert "tests" in done.stdout and "fail" in done.stdout
    assert list((store_dir(project.root) / "adhoc" / "logs").iterdir())  # the full gate logs ...
    assert ".stepkit" not in project.git(
        "status", "--porcelain"
    )  # ... never show up as changes to commit


def test_stage_with_an_unknown_step_is_one_line(tmp_path):
    project = make_project(tmp_path)
    done = stage(project, "orient", "--step", "42")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "step 42 not found" in done.stderr


def test_python_api_runs_a_step_and_reuses_stages(tmp_path):
    project = make_project(tmp_path)
    coder = project.scripted_coder
    engine = f"scripted:{project.script()}"
    os.environ["E2E_STATE_DIR"] = str(project.state_dir)
    try:
        paused = stepkit.run_step(step=1, project_dir=project.root, engine=engine, coder=coder)
        assert paused.outcome == "PAUSED" and paused.exit_code == 5
        assert paused.to_json()["pending"]["node"] == "gate_user_review"
        done = stepkit.resume_run(paused.run_id, answer="approve", project_dir=project.root)
        assert done.outcome == "STEP_COMPLETE" and done.output.startswith("STEP_COMPLETE\n")
    finally:
        del os.environ["E2E_STATE_DIR"]
    status = stepkit.plan_status(project.root)
    assert [s["status"] for s in status["steps"]] == ["complete", "pending", "pending"]
    assert status["next"] == 2
    detected = stepkit.detect_gates(project.root)
    assert {g["name"]: g["plugin"] for g in detected["gates"]}[
        "tests"
    ] == "stepkit.plugins.overrides"
    verified = stepkit.verify(project.root)
    assert verified["ok"] is True
    assert [g["status"] for g in verified["gates"]] == ["not_run", "pass", "pass", "pass"]
    orient = stepkit.run_stage("orient", step=2, project_dir=project.root, engine=engine)
    assert orient["plan_summary"] == "Add calc.mul."


@pytest.mark.parametrize("name", [name for name, row in STAGES.items() if row.locks])
def test_a_stage_that_locks_waits_for_no_one_while_a_run_is_live(tmp_path, name):
    """Every stage whose row says it locks refuses, in one line and exit 2,
    while another process holds the project lock for a run (here the test
    process, through the real flock), and changes nothing."""
    from stepkit.engine.lock import project_lock

    project = make_project(tmp_path)
    before = {p: p.read_bytes() for p in project.plans.rglob("*.md")}
    with project_lock(project.root, "run", step=1) as lock:
        lock.name(run_id="20261201-101500-live")
        done = stage(project, name, "--step", "1")
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    busy = (
        f"stepkit: error: run 20261201-101500-live (step 1) is live in this project (pid {os.getpid()}); "
        "wait for it or stop it"
    )
    assert done.stderr.strip().splitlines() == [busy]
    assert {p: p.read_bytes() for p in project.plans.rglob("*.md")} == before


def test_an_unknown_stage_is_one_line_naming_the_tables_stages(tmp_path):
    project = make_project(tmp_path)
    done = stage(project, "deploy", "--step", "1")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        (
            f"stepkit: error: stage: argument STAGE: unknown stage 'deploy' "
            f"(known: {', '.join(STAGES)}) (stepkit stage --help shows the usage)"
        )
    ]
