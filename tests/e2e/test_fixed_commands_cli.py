"""Commands fixed once, through the real CLI: ``stepkit detect`` prints what
``stepkit verify`` runs, and a run keeps its commands across a resume."""

from __future__ import annotations

import json

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, PY, make_project
from tests.support.gitrepo import init_repo


def test_detect_prints_what_verify_runs_when_the_first_gate_creates_a_lockfile(tmp_path):
    """A Makefile lint that (like ``uv run``) leaves an untracked, ignored
    uv.lock behind: the build gate runs what detect printed before it."""
    from tests.support.e2e import Project

    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\n\n[tool.mypy]\nstrict = false\n'
    )
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "Makefile").write_text("lint:\n\t@echo 'version = 1' > uv.lock\n")
    (root / "x").mkdir()
    (root / "x" / "__init__.py").write_text("")  # the package mypy checks
    (root / ".gitignore").write_text("uv.lock\n")
    init_repo(root)
    project = Project(root, tmp_path)
    detected = project.stepkit("detect", "--project-dir", str(root)).data
    verified = project.stepkit("verify", "--project-dir", str(root)).data
    assert (root / "uv.lock").exists()  # the lint gate ran and left it
    ran = {g["name"]: g["command"] for g in verified["gates"]}
    assert ran == {g["name"]: g["command"] for g in detected["gates"]}
    assert ran["build"] is not None and "uv run" not in ran["build"]


@pytest.mark.slow
def test_resume_runs_the_commands_the_run_fixed_even_after_the_config_changed(tmp_path):
    project = make_project(tmp_path)
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"})
    first = project.run()
    assert first.code == 5, first.stderr  # paused at the final approval
    state = json.loads(
        (store_dir(project.root) / "runs" / first.data["run_id"] / "state.json").read_text()
    )
    stored = state["settings"]["gate_plan"]["commands"]
    assert stored["tests"]["command"] == f"{PY} check.py"
    config = project.root / "stepkit.toml"
    config.write_text(config.read_text().replace(f'test = "{PY} check.py"', 'test = "exit 9"'))
    # comments at the final approval send the step back to the coder, then through every gate
    second = project.resume("rename nothing, just run again")
    assert second.code == 5, second.stderr
    tests = next(g for g in second.data["gates"] if g["name"] == "tests")
    assert (tests["command"], tests["status"]) == (f"{PY} check.py", "pass")
