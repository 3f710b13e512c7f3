"""``stepkit verify``: the real plugin manager, real commands, the fixed
JSON shape, exit codes and the human-readable progress."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from stepkit.cli import main
from stepkit.records import GATE_JSON_FIELDS as JSON_FIELDS
from stepkit.records import GATE_JSON_VERDICT_FIELDS
from stepkit.workspace.store import store_dir

MAKEFILE = "lint:\n\t@echo lint clean\n\ntest:\n\t@echo 'ran 4 checks'\n\t@test -f ready.txt\n"


@pytest.fixture
def make_project(tmp_path):
    (tmp_path / "Makefile").write_text(MAKEFILE)
    return tmp_path


def verify_json(capsys, project: Path, *extra: str) -> tuple[int, dict]:
    code = main(["verify", "--project-dir", str(project), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_json_has_exactly_the_design_shape(make_project, capsys):
    code, data = verify_json(capsys, make_project)
    assert code == 1
    assert set(data) == {
        "ok",
        "project_type",
        "gates",
        "unsupported",
    }  # the fixed fields, then the added
    assert (data["ok"], data["project_type"]) == (False, "make")
    assert [g["name"] for g in data["gates"]] == ["format", "lint", "build", "tests"]
    for gate in data["gates"]:
        assert tuple(gate) == (
            *JSON_FIELDS,
            *GATE_JSON_VERDICT_FIELDS,
        )  # the fixed fields, then the added
    by_name = {g["name"]: g for g in data["gates"]}
    assert by_name["format"]["status"] == "not_run" and by_name["format"]["log"] is None
    lint, tests = by_name["lint"], by_name["tests"]
    assert (lint["status"], lint["command"], lint["plugin"], lint["exit_code"]) == (
        "pass",
        "make lint",
        "stepkit.plugins.projects.taskrunners",
        0,
    )
    assert (tests["status"], tests["exit_code"]) == ("fail", 2)
    assert "ran 4 checks" in tests["evidence"]
    assert isinstance(tests["duration_s"], float)
    log = Path(tests["log"])
    assert log.is_file() and log.parent.name == "logs"
    assert log.parent.parent.parent == store_dir(make_project) / "verify"
    assert (store_dir(make_project) / ".gitignore").read_text() == "*\n"


def test_all_gates_that_ran_passed_exits_0(make_project, capsys, monkeypatch):
    (make_project / "test_ready.py").write_text("def test_ready():\n    pass\n")
    monkeypatch.setenv("TEST_CMD", f"{sys.executable} -m pytest -q -p no:cacheprovider")
    code, data = verify_json(capsys, make_project)
    assert (code, data["ok"]) == (0, True)


def test_a_missing_tool_is_error_and_fails_verify(make_project, capsys, monkeypatch):
    monkeypatch.setenv("TEST_CMD", "no-such-test-runner-5c1d")
    code, data = verify_json(capsys, make_project)
    tests = data["gates"][-1]
    assert (code, tests["status"], tests["plugin"]) == (1, "error", "stepkit.plugins.overrides")


def test_human_output_shows_progress_evidence_and_verdict(make_project, capsys):
    code = main(["verify", "--project-dir", str(make_project)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[0] == f"stepkit verify: {make_project.resolve()}"
    order = [
        "[format] NOT RUN",
        "GATE NOT RUN: no format command was found for this project.",
        "[lint] running: make lint",
        "[lint] PASS in",
        "    $ make lint",
        "[tests] running: make test",
        "[tests] FAIL in",
        "    exit code: 2",
        "verify (make project): FAILED — tests fail; NOT RUN (not evidence of a pass): format, build",
    ]
    positions = [out.index(text) for text in order]
    assert positions == sorted(positions)


def test_nothing_to_run_exits_2_and_says_it_is_no_evidence(tmp_path, capsys):
    code = main(["verify", "--project-dir", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 2
    assert "no gate ran — this is NOT evidence that the project passes" in captured.out
    assert captured.err.strip() == (
        "stepkit: error: no gate could run (no project type stepkit knows): no command was found for "
        "format, lint, build or tests; `stepkit detect` shows what was looked for, stepkit.toml "
        "[commands] sets them"
    )


def test_an_existing_gitignore_is_kept(make_project, capsys):
    store_dir(make_project).mkdir()
    (store_dir(make_project) / ".gitignore").write_text("runs/\n")
    verify_json(capsys, make_project)
    assert (store_dir(make_project) / ".gitignore").read_text() == "runs/\n"


def test_a_disabled_plugin_leaves_its_gates_not_run(make_project, capsys):
    code, data = verify_json(capsys, make_project, "-p", "no:taskrunners")
    assert code == 2  # no gate could run
    assert {g["status"] for g in data["gates"]} == {"not_run"}


def test_a_bad_project_dir_is_a_usage_error(tmp_path, capsys):
    code = main(["verify", "--project-dir", str(tmp_path / "nope"), "--json"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert (
        captured.err.strip()
        == f"stepkit: error: project dir {tmp_path / 'nope'} is not a directory"
    )
