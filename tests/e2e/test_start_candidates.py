"""A gate command detection chose that cannot start here gives its place,
before the coder, to the gate's next candidate that can
(:func:`stepkit.workspace.gate_commands.start_commands`): the run is not
ended on it, and the gates run the candidate, with no "the step changed the
command" flag.  The user's own command is never replaced.  A real git
project; the start's choice and its precheck as a run makes them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stepkit.config import load_config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.gate_commands import START_COMMANDS_KEY, run_gate_plan, start_commands
from stepkit.workspace.precheck import start_faults
from stepkit.workspace.store import store_dir
from tests.e2e.test_init_cli import stepkit
from tests.e2e.test_init_proves import ci_project
from tests.support.e2e import PY, make_project
from tests.support.gitrepo import write_files


def _start(project):
    config = load_config(project)
    pm = get_plugin_manager(project, config)
    settings: dict = {}
    start_commands(settings, pm, project, config)
    return settings, pm, config


def test_a_ci_command_that_cannot_start_gives_its_place_to_the_next_candidate(tmp_path):
    project = ci_project(tmp_path, "hatch test")  # no hatch here; the Python plugin offers pytest
    settings, pm, config = _start(project)
    entry = settings[START_COMMANDS_KEY]["tests"]
    assert entry["command"].startswith("python -m pytest"), entry
    assert entry["replaces"] == "hatch test" and "hatch" in entry["why"]
    assert start_faults(settings, pm, project) == []
    plan = run_gate_plan(settings, pm, project, config)
    assert plan.command("tests")[0] == entry["command"]
    assert plan.command_changes == []


def test_the_users_own_command_is_never_replaced(tmp_path):
    project = ci_project(tmp_path, "python -m pytest -q")
    (project / "stepkit.toml").write_text('[commands]\ntest = "hatch test"\n')
    settings, pm, _ = _start(project)
    assert settings[START_COMMANDS_KEY]["tests"]["command"] == "hatch test"
    assert [fault.name for fault in start_faults(settings, pm, project)] == ["tests"]


def _replaced_in_a_run(tmp_path):
    """A real run whose tests gate, detected from CI as `hatch test` (not on
    this machine), takes the Python plugin's pytest: the result, its
    events, and the coder's first prompt."""
    project = make_project(tmp_path)
    config = project.root / "stepkit.toml"
    kept = [line for line in config.read_text().splitlines() if not line.startswith("test = ")]
    config.write_text("\n".join(kept) + "\n")
    write_files(
        project.root,
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "tests/test_ok.py": "def test_ok():\n    assert True\n",
            ".github/workflows/ci.yml": "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
            "    steps:\n      - uses: actions/checkout@v4\n      - run: hatch test\n",
        },
    )
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "CI runs hatch")
    # `python` on the gates' PATH is the suite's, which has pytest
    result = project.run(env=project.env(PATH=f"{Path(PY).parent}{os.pathsep}{os.environ['PATH']}"))
    run_dir = store_dir(project.root) / "runs" / result.data["run_id"]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return result, events, project.coder_prompt(0)


@pytest.mark.slow
def test_a_run_tells_the_user_which_command_took_the_place_of_one_that_cannot_start(tmp_path):
    result, events, _ = _replaced_in_a_run(tmp_path)
    assert result.code == 5, result.stdout + result.stderr  # the final approval
    said = [line for line in result.stderr.splitlines() if "`hatch test`" in line]
    assert len(said) == 1, result.stderr
    assert said[0].startswith("stepkit: the tests gate runs `python -m pytest"), said
    assert "in the place of `hatch test` (from .github/workflows/ci.yml:" in said[0]
    assert "hatch" in said[0].split("cannot start here:")[1]
    replaced = [event for event in events if event["event"] == "gate_command_replaced"]
    assert [(e["gate"], e["replaces"]) for e in replaced] == [("tests", "hatch test")]
    assert replaced[0]["command"].startswith("python -m pytest") and replaced[0]["why"]


@pytest.mark.slow
def test_the_coders_prompt_names_the_command_the_gates_will_run(tmp_path):
    *_, prompt = _replaced_in_a_run(tmp_path)
    tests = next(line for line in prompt.splitlines() if line.startswith("- tests: "))
    assert tests.startswith("- tests: `python -m pytest"), prompt
    assert "hatch" not in prompt


def test_detect_lists_each_gates_other_candidates_in_order(tmp_path):
    project = ci_project(tmp_path, "hatch test")
    done = stepkit("detect", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    tests = next(g for g in json.loads(done.stdout)["gates"] if g["name"] == "tests")
    assert tests["command"] == "hatch test"  # detection's first choice, as before
    others = tests["candidates"]
    assert [c["command"].split()[:3] for c in others][:1] == [["python", "-m", "pytest"]]
    assert all(c["plugin"] for c in others)
    text = stepkit("detect", cwd=project).stdout.splitlines()
    at = next(i for i, line in enumerate(text) if line.startswith("tests "))
    shown = [line.strip() for line in text[at + 1 : at + 1 + len(others)]]
    assert shown == [f"else: {c['command']}  [{c['plugin']}]" for c in others], text


def test_detect_lists_no_other_candidate_of_the_users_own_command(tmp_path):
    # a variant: the user's setting ends the search, so nothing takes its place
    project = ci_project(tmp_path, "hatch test")
    (project / "stepkit.toml").write_text('[commands]\ntest = "hatch test"\n')
    gates = json.loads(stepkit("detect", "--json", cwd=project).stdout)["gates"]
    assert {g["name"]: g["candidates"] for g in gates}["tests"] == []
    assert "else: " not in stepkit("detect", cwd=project).stdout
