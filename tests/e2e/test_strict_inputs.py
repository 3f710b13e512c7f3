"""Strict inputs on every path: ``-p no:`` on the plugin that provides the
chosen coder, reviewer or engine, unknown ``--set`` keys with ``--graph``
and from the Python API, and ``stepkit resume`` repeating the up-front
checks.  Each refusal is exit 2 (a UsageError from the API), one line,
nothing run, the run as it was.

Real CLI, real git repos in tmp dirs, a command coder and the scripted engine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.api import run_step
from stepkit.errors import UsageError
from stepkit.workspace.store import store_dir
from tests.support.e2e import Project, make_project
from tests.support.graph_helpers import IMPORT_ROOT, write_graph


def runs(project: Project) -> list[Path]:
    runs_dir = store_dir(project.root) / "runs"
    return sorted(runs_dir.iterdir()) if runs_dir.is_dir() else []


def assert_refused(result, *words: str) -> None:
    assert result.code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize(
    ("disabled", "words"),
    [
        ("command", ["--coder command:", "-p no:command"]),
        ("builtin_engines", ["--engine scripted:", "-p no:builtin_engines"]),
        # a variant: the reviewer's plugin, by its full name
        ("stepkit.plugins.coders.reviewer", ["--reviewer command:"]),
    ],
)
def test_disabling_the_plugin_that_provides_the_choice_exits_2(tmp_path, disabled, words):
    project = make_project(tmp_path)
    result = project.run("-p", f"no:{disabled}", json_out=False)
    assert_refused(result, *words)
    assert runs(project) == [] and project.coder_calls() == 0


def go_graph(project: Project) -> Path:
    return write_graph(
        project.root,
        {"a": {"kind": "script", "call": "tests.support.graph_helpers:go", "next": "end_success"}},
    )


def test_an_unknown_set_key_with_a_graph_file_exits_2_and_its_own_keys_pass(tmp_path):
    project = make_project(tmp_path)
    graph = go_graph(project)
    env = project.env(PYTHONPATH=str(IMPORT_ROOT))
    refused = project.stepkit(
        "run", "--graph", str(graph), "--set", "scirpt={a: next}", env=env, json_out=False
    )
    assert_refused(refused, "--set scirpt", "unknown key", "script")  # its own keys are named
    assert runs(project) == []
    ok = project.stepkit("run", "--graph", str(graph), "--set", "script={a: next}", env=env)
    assert ok.code == 0, (ok.stdout, ok.stderr)


def test_an_unknown_set_key_from_the_python_api_is_a_usage_error(tmp_path):
    project = make_project(tmp_path)
    with pytest.raises(UsageError, match="unknown key 'max_fix_atempts'"):
        run_step(
            project_dir=project.root,
            engine=f"scripted:{project.script()}",
            coder=project.scripted_coder,
            sets={"max_fix_atempts": 3},
        )
    with pytest.raises(UsageError, match="unknown key 'nope'"):
        run_step(project_dir=project.root, graph=go_graph(project), sets={"nope": 1})
    assert runs(project) == [] and project.coder_calls() == 0


def paused_at_approval(tmp_path: Path) -> tuple[Project, Path, bytes]:
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.code == 5 and paused.data["pending"]["node"] == "gate_user_review", paused.stdout
    state = store_dir(project.root) / "runs" / paused.data["run_id"] / "state.json"
    return project, state, state.read_bytes()


@pytest.mark.slow
def test_resume_refuses_when_the_coders_plugin_is_now_disabled(tmp_path):
    project, state, before = paused_at_approval(tmp_path)
    result = project.stepkit(
        "resume",
        "--project-dir",
        str(project.root),
        "--answer",
        "revise",
        "-p",
        "no:command",
        json_out=False,
    )
    assert_refused(result, "--coder command:", "-p no:command")
    assert state.read_bytes() == before
    assert (
        project.resume("approve").outcome == "STEP_COMPLETE"
    )  # it goes on, unchanged, once allowed


@pytest.mark.slow
def test_resume_refuses_when_the_engine_spec_no_longer_holds(tmp_path):
    """The scripted answers file is gone: the engine cannot be built."""
    project, state, before = paused_at_approval(tmp_path)
    (project.state_dir / "answers.yaml").unlink()
    result = project.stepkit(
        "resume", "--project-dir", str(project.root), "--answer", "approve", json_out=False
    )
    assert_refused(result, "answers.yaml")
    assert state.read_bytes() == before
    assert json.loads(state.read_text().split("\n")[0])["status"] == "paused"
