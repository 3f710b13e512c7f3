"""``stepkit run`` / ``stepkit resume`` on the command line: exit codes, the
``--json`` object, the printed pause, ``--set`` and Ctrl-C."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.api import parse_sets
from stepkit.cli import main
from stepkit.errors import UsageError
from stepkit.workspace.store import store_dir
from tests.support.e2e import sh
from tests.support.graph_helpers import write_graph

JSON_KEYS = {
    "outcome",
    "exit_code",
    "run_id",
    "step",
    "title",
    "plan",
    "handoff",
    "handoff_draft",
    "gates",
    "fix_attempts",
    "usage",
    "output",
    "run_dir",
}


@pytest.fixture
def graph(project_dir: Path) -> Path:
    ends = {
        "blocked": {
            "kind": "end",
            "sentinel": "STEP_BLOCKED",
            "exit_code": 3,
            "output": "STEP_BLOCKED",
        },
        "rejected": {
            "kind": "end",
            "sentinel": "STEP_REJECTED",
            "exit_code": 4,
            "output": "STEP_REJECTED",
        },
    }
    return write_graph(
        project_dir,
        {
            "first": {
                "kind": "script",
                "call": "tests.support.graph_helpers:scripted",
                "next": "choose",
                "outputs": ["step", "title", "gates"],
            },
            "choose": {
                "kind": "approval",
                "question": "Which end for step {step}?",
                "pre_answer": True,
                "options": ["complete", "failed", "blocked", "rejected"],
                "routes": {
                    "complete": "end_success",
                    "failed": "end_failure",
                    "blocked": "blocked",
                    "rejected": "rejected",
                },
                "updates": {"failed": {"failure_reason": "asked to fail"}},
            },
            **ends,
        },
    )


def run_json(capsys, *args: str) -> tuple[int, dict]:
    code = main([*args, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("answer", "code", "sentinel"),
    [
        ("complete", 0, "STEP_COMPLETE"),
        ("failed", 1, "STEP_FAILED"),
        ("blocked", 3, "STEP_BLOCKED"),
        ("rejected", 4, "STEP_REJECTED"),
    ],
)
def test_exit_codes_and_json(project_dir, graph, capsys, answer, code, sentinel):
    exit_code, data = run_json(
        capsys,
        "run",
        "--graph",
        str(graph),
        "--project-dir",
        str(project_dir),
        "--answer",
        f"choose={answer}",
        "--set",
        "stub_updates={first: {step: 7, title: Seven, gates: [{name: tests, status: pass, tree_hash: x}]}}",
    )
    assert exit_code == code
    assert set(data) == JSON_KEYS
    assert (
        Path(data["run_dir"]).name == data["run_id"]
        and Path(data["run_dir"], "state.json").is_file()
    )
    assert (data["outcome"], data["exit_code"], data["step"], data["title"]) == (
        sentinel,
        code,
        7,
        "Seven",
    )
    assert data["output"].splitlines()[0] == sentinel
    fixed = {
        "name": "tests",
        "status": "pass",
        "command": None,
        "plugin": None,
        "exit_code": None,
        "duration_s": 0.0,
        "log": None,
        "summary": "",
        "evidence": "",
    }
    # the design's fields, then added ones (changed_files, the verdict lists)
    assert [{key: gate[key] for key in fixed} for gate in data["gates"]] == [fixed]
    assert data["gates"][0]["new_failures"] == data["gates"][0]["preexisting_failures"] == []
    assert data["handoff"] is None and data["plan"] is None and data["fix_attempts"] == 0
    assert data["usage"] == {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "cost_usd": 0.0,
    }


def test_pause_prints_question_and_resume_command_then_resume_json(project_dir, graph, capsys):
    assert main(["run", "--graph", str(graph), "--project-dir", str(project_dir)]) == 5
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == "PAUSED" and "Which end for step (none)?" in lines
    run_id = next(p.name for p in (store_dir(project_dir) / "runs").iterdir())
    assert (
        f"  stepkit resume {run_id[:13]} --project-dir {sh(project_dir)} --answer complete" in lines
    )
    assert f"run {run_id}: PAUSED (exit 5)" in captured.err  # the progress display, on stderr

    code, data = run_json(capsys, "resume", "--project-dir", str(project_dir))
    assert code == 5 and data["outcome"] == "PAUSED"
    assert data["pending"] == {
        "node": "choose",
        "question": "Which end for step (none)?",
        "options": ["complete", "failed", "blocked", "rejected"],
    }
    code, data = run_json(
        capsys, "resume", run_id, "--project-dir", str(project_dir), "--answer", "complete"
    )
    assert (code, data["outcome"], data["run_id"]) == (0, "STEP_COMPLETE", run_id)
    assert "pending" not in data
    assert main(["resume", run_id, "--project-dir", str(project_dir)]) == 2
    assert "already finished (STEP_COMPLETE)" in capsys.readouterr().err


def test_ctrl_c_saves_the_run_and_exits_130(project_dir, capsys):
    graph = write_graph(
        project_dir,
        {
            "a": {
                "kind": "script",
                "call": "tests.support.graph_helpers:scripted",
                "next": "end_success",
            }
        },
    )
    code = main(
        [
            "run",
            "--graph",
            str(graph),
            "--project-dir",
            str(project_dir),
            "--set",
            "script={a: interrupt/next}",
        ]
    )
    assert code == 130
    err = capsys.readouterr().err
    run_id = next(p.name for p in (store_dir(project_dir) / "runs").iterdir())
    assert f"Resume with: stepkit resume {run_id} --project-dir {sh(project_dir)}" in err
    state = json.loads((store_dir(project_dir) / "runs" / run_id / "state.json").read_text())
    assert state["status"] == "interrupted"
    assert main(["resume", "--project-dir", str(project_dir)]) == 0


def test_set_values_are_yaml_and_malformed_ones_are_usage_errors(project_dir, graph, capsys):
    assert parse_sets(["max_fix_attempts=3", "name=x=y", "flag=true", "empty="]) == {
        "max_fix_attempts": 3,
        "name": "x=y",
        "flag": True,
        "empty": "",
    }
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        parse_sets(["max_fix_attempts"])
    with pytest.raises(UsageError, match="not valid YAML"):
        parse_sets(["x=[1"])
    assert (
        main(["run", "--graph", str(graph), "--project-dir", str(project_dir), "--set", "=3"]) == 2
    )
    assert "--set =3: expected KEY=VALUE" in capsys.readouterr().err
    assert not store_dir(project_dir).exists()


STEPCONF = """
import stepkit

@stepkit.hookimpl
def stepkit_add_options(parser, command):
    if command == "run":
        parser.add_argument("--colour", default="grey")

@stepkit.hookimpl
def stepkit_configure(config, settings):
    settings["colour_seen"] = settings["options"].get("colour")
"""


@pytest.mark.parametrize("home_relative", [False, True])
def test_plugin_options_reach_stepkit_configure_and_the_nodes(
    project_dir, capsys, monkeypatch, home_relative
):
    (project_dir / "stepconf.py").write_text(STEPCONF)
    graph = write_graph(
        project_dir,
        {
            "probe": {
                "kind": "script",
                "call": "tests.support.graph_helpers:settings_probe",
                "next": "end_success",
                "outputs": ["probe"],
            },
            "end_success": {
                "kind": "end",
                "sentinel": "STEP_COMPLETE",
                "exit_code": 0,
                "output": "colour: {probe}",
            },
        },
    )
    given = str(project_dir)
    if (
        home_relative
    ):  # the plugins that add options are found the way the command finds the project
        monkeypatch.setenv("HOME", str(project_dir.parent))
        given = f"~/{project_dir.name}"
    assert main(["run", "--graph", str(graph), "--project-dir", given, "--colour", "teal"]) == 0
    assert capsys.readouterr().out == "STEP_COMPLETE\ncolour: teal\n"


def test_bad_project_dir_and_bad_graph_start_no_run(tmp_path, capsys):
    assert main(["run", "--project-dir", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("start: a\nnodes: {a: {kind: script}}\n")
    assert main(["run", "--project-dir", str(tmp_path), "--graph", str(bad)]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"stepkit: error: graph {bad}: node 'a' call: missing (required for script nodes)"
    )
    assert not store_dir(tmp_path).exists()
