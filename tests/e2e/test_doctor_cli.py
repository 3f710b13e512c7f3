"""``stepkit doctor``: one line per check with its fix, exit 1 when a check
a run needs fails (the plan, a gate's tool, the engine), warnings alone
leave it 0."""

from __future__ import annotations

import json

from tests.support.e2e import make_project


def doctor(project, *args):
    return project.stepkit(
        "doctor", "--engine", f"scripted:{project.script()}", *args, json_out=False
    )


def test_a_ready_project_passes_and_names_each_gates_command(tmp_path):
    project = make_project(tmp_path)
    done = doctor(project)
    assert done.code == 0, done.stdout + done.stderr
    assert "✓ plan: 3 step(s), no problems" in done.stdout
    assert "✓ tests: `" in done.stdout and "check.py`" in done.stdout
    assert "✓ engine: the engine, coder and reviewer are ready to start" in done.stdout
    assert "! format: no command found: NOT RUN" in done.stdout  # a warning only


def test_a_gate_tool_that_is_not_installed_fails_with_its_fix(tmp_path):
    project = make_project(tmp_path)
    config = project.root / "stepkit.toml"
    config.write_text(config.read_text().replace('lint = "', 'lint = "no-such-linter-xyz . #'))
    done = doctor(project)
    assert done.code == 1
    lines = done.stdout.splitlines()
    failed = lines.index(next(line for line in lines if line.startswith("✗ lint:")))
    assert "`no-such-linter-xyz`" in lines[failed]
    assert lines[failed + 1].strip().startswith("fix: install no-such-linter-xyz")


def test_an_engine_without_credentials_fails_a_run_would_refuse_it(tmp_path):
    project = make_project(tmp_path)
    done = project.stepkit("doctor", "--engine", "anthropic", json_out=False)
    assert done.code == 1
    assert "✗ engine: --engine anthropic: no credentials" in done.stdout


def test_a_plan_problem_fails_and_json_has_every_check(tmp_path):
    project = make_project(tmp_path)
    (project.plans / "steps" / "02-again.md").write_text(
        (project.plans / "steps" / "02-div.md").read_text()
    )
    done = doctor(project, "--json")
    assert done.code == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["plan"]["status"] == "fail" and "duplicate" in checks["plan"]["text"].lower()
    assert {"format", "lint", "build", "tests", "engine", "git identity", "merge driver"} <= set(
        checks
    )


def test_an_unregistered_merge_driver_is_a_warning_that_register_fixes(tmp_path):
    project = make_project(tmp_path)
    done = doctor(project)
    assert "! merge driver: the plan merge driver is not registered" in done.stdout
    assert done.code == 0
    assert project.stepkit("merge-driver", "--register", json_out=False).code == 0
    assert "✓ merge driver: registered for the plan repo" in doctor(project).stdout
