"""Engines are plugins: a project's ``stepconf.py`` adds an engine kind
through ``stepkit_make_engine`` without touching stepkit, ``stepkit
plugins`` lists it (``stepkit_engine_kinds``), and a run's ``--engine`` is
recorded in its checkpoint and used again on resume.  Real CLI, real git
project, the command coder of tests/support/e2e.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.engine.runstore import RunStore
from stepkit.workspace.store import store_dir
from tests.support.e2e import DEVIATION, HANDOFF, SWEEP

#: an engine a third party writes: answers per node from a JSON file, each
#: call recorded in calls.txt
STEPCONF = """\
import json
import pathlib

from stepkit import hookimpl
from stepkit.records import StageFault


class CannedEngine:
    def __init__(self, path):
        self.path = pathlib.Path(path)

    def structured(self, *, node, system, prompt, schema, tools, ctx, max_turns=20, prefix=None):
        with (self.path.parent / "calls.txt").open("a") as calls:
            calls.write(node + "\\n")
        answers = json.loads(self.path.read_text())
        if node not in answers:
            raise StageFault(f"canned engine: no answer for {node}")
        return schema.model_validate(answers[node])


@hookimpl
def stepkit_engine_kinds():
    return {"canned:FILE": "answers per node from a JSON file"}


@hookimpl
def stepkit_make_engine(kind, arg, project_dir):
    return CannedEngine(pathlib.Path(project_dir) / arg) if kind == "canned" else None
"""


@pytest.fixture
def project(project):
    (project.root / "stepconf.py").write_text(STEPCONF)
    answers = {"orient": DEVIATION, "edge_case_sweep": SWEEP, "write_handoff": HANDOFF}
    (project.state_dir / "canned.json").write_text(json.dumps(answers))
    return project


def canned(project) -> str:
    return f"canned:{project.state_dir / 'canned.json'}"


def calls(project) -> list[str]:
    return (project.state_dir / "calls.txt").read_text().split()


def test_a_stepconf_engine_is_listed_by_stepkit_plugins(project):
    listed = project.stepkit("plugins", "--project-dir", str(project.root))
    assert listed.code == 0, listed.stderr
    engines = {e["usage"]: e for e in listed.data["engines"]}
    assert engines["canned:FILE"]["plugin"] == "stepconf"
    assert engines["anthropic[:MODEL]"]["plugin"] == "stepkit.plugins.llm.builtin_engines"

    table = project.stepkit("plugins", "--project-dir", str(project.root), json_out=False)
    assert "canned:FILE" in table.stdout and "answers per node from a JSON file" in table.stdout


@pytest.mark.slow
def test_the_run_uses_the_plugin_engine_and_its_resume_uses_the_recorded_one(project):
    # the project's configured engine is one that cannot be called here (no
    # API key): a resume that forgot the run's --engine would fault
    toml = project.root / "stepkit.toml"
    toml.write_text('engine = "anthropic"\n' + toml.read_text())

    paused = project.stepkit(
        "run",
        "--project-dir",
        str(project.root),
        "--engine",
        canned(project),
        "--coder",
        project.scripted_coder,
    )
    assert paused.code == 5, paused.stderr
    assert paused.data["pending"]["node"] == "gate_deviation"
    assert calls(project) == ["orient"]
    checkpoint = RunStore(project.root).open(paused.data["run_id"]).load()
    assert checkpoint.settings["engine"] == canned(project)

    resumed = project.resume("proceed")
    assert resumed.code == 5, resumed.stderr
    assert resumed.data["pending"]["node"] == "gate_user_review"
    assert calls(project) == ["orient", "edge_case_sweep", "write_handoff"]
    assert "Added calc.mul." in Path(resumed.data["handoff_draft"]).read_text()


def test_an_unknown_engine_names_the_plugin_kinds_and_starts_no_run(project):
    project.stepkit(
        "trust", "--project-dir", str(project.root), json_out=False
    )  # no first-use note in the way
    done = project.stepkit(
        "run",
        "--project-dir",
        str(project.root),
        "--engine",
        "nosuch:x",
        "--coder",
        project.scripted_coder,
    )
    assert done.code == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("stepkit: error: unknown engine 'nosuch:x': use anthropic[:MODEL] or ")
    assert line.endswith(" or canned:FILE")  # built-ins first, then the project's
    assert not (store_dir(project.root) / "runs").exists()
