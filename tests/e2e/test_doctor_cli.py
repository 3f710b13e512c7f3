"""``stepkit doctor``: one line per check with its fix, exit 1 when a check
a run needs fails (the plan, a gate's tool, the engine, a required
sandbox), warnings alone leave it 0.  The sandbox line against the real
bwrap and against one that cannot create its namespaces."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.e2e import make_project, unconfined_env


def doctor(project, *args, env=None):
    return project.stepkit(
        "doctor", "--engine", f"scripted:{project.script()}", *args, env=env, json_out=False
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


@pytest.mark.slow
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


def test_the_sandbox_line_names_bubblewrap_and_its_version(tmp_path):
    from stepkit.workspace import sandbox

    if sandbox.unavailable() is not None:
        pytest.skip(f"no sandbox here: {sandbox.unavailable()}")
    project = make_project(tmp_path)
    done = doctor(project)
    line = next(line for line in done.stdout.splitlines() if line.startswith("✓ sandbox: "))
    assert re.fullmatch(
        r"✓ sandbox: bubblewrap \d+\.\d+\S*: the coder and the code under test run confined", line
    ), line


def test_without_a_sandbox_doctor_warns_with_the_fix(tmp_path):
    project = make_project(tmp_path)
    done = doctor(project, env=project.env(**unconfined_env(tmp_path)))
    assert done.code == 0, done.stdout + done.stderr  # a run would start, unconfined
    lines = done.stdout.splitlines()
    at = lines.index(
        "! sandbox: bwrap cannot create its namespaces here: bwrap: No permissions to create "
        "new namespace: the coder would run unconfined"
    )
    assert lines[at + 1].startswith("    fix: allow unprivileged user namespaces")


def test_a_required_sandbox_that_cannot_be_made_fails_on_its_own_line(tmp_path):
    project = make_project(tmp_path)
    config = project.root / "stepkit.toml"
    config.write_text(config.read_text().replace("[sandbox]\n", "[sandbox]\nrequired = true\n"))
    done = doctor(project, "--json", env=project.env(**unconfined_env(tmp_path)))
    assert done.code == 1, done.stdout + done.stderr
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["sandbox"]["status"] == "fail"
    assert "a run refuses to start ([sandbox] required = true)" in checks["sandbox"]["text"]
    assert checks["engine"]["status"] == "ok", "the engine line is the engine's, not the sandbox's"
    run = project.run(env=project.env(**unconfined_env(tmp_path)), json_out=False)
    assert run.code == 2 and "[sandbox] required = true" in run.stderr  # what doctor foretold


CHECKS = """\
import stepkit


@stepkit.hookimpl
def stepkit_doctor_checks(settings):
    if settings["coder"] == "bad-answer":
        return ["not a dict"]
    if settings["coder"] == "raises":
        raise RuntimeError("server down")
    return [{"name": "server", "status": "fail", "text": f"no answer for {settings['coder']}",
             "fix": "start it: mycoder serve"}]
"""


@pytest.mark.slow
def test_a_plugins_doctor_checks_are_lines_and_a_failing_one_fails(tmp_path):
    """stepkit_doctor_checks: a project's plugin adds a line for the run
    doctor's options describe; an answer that is not a list of checks is one
    failed line naming the hook, never a traceback."""
    project = make_project(tmp_path)
    (project.root / "stepconf.py").write_text(CHECKS)
    assert project.stepkit("trust", json_out=False).code == 0
    done = doctor(project, "--coder", project.scripted_coder)
    assert done.code == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    at = lines.index(f"✗ server: no answer for {project.scripted_coder}")
    assert lines[at + 1] == "    fix: start it: mycoder serve"
    assert lines[at - 1].startswith("✓ engine:"), "the plugins' lines follow the engine's"
    bad = doctor(project, "--coder", "bad-answer")
    assert bad.code == 1 and not bad.stderr, bad.stderr
    assert "✗ plugins: stepkit_doctor_checks: a check must be a dict" in bad.stdout
    raised = doctor(project, "--coder", "raises")
    assert raised.code == 1 and not raised.stderr, raised.stderr
    assert "✗ plugins: stepkit_doctor_checks failed: RuntimeError: server down" in raised.stdout
