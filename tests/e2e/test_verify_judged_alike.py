"""``stepkit verify`` judges as a run does: a tests gate in which no test ran
is never ok (exit 1, ``ok`` false), exit 2 only when no gate had a command to
run, and a format script that already checks runs as the check it is."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from stepkit.cli import main
from tests.support.gitrepo import write_files

PY = sys.executable
NO_OTHER_GATES = 'format = ""\nlint = ""\nbuild = ""\n'


def verify_json(capsys, project: Path) -> tuple[int, dict, str]:
    code = main(["verify", "--project-dir", str(project), "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_pytest_collecting_no_test_fails_verify_with_exit_1(tmp_path, capsys):
    write_files(
        tmp_path,
        {
            "mod.py": "def helper():\n    return 1\n",
            "stepkit.toml": f'[commands]\n{NO_OTHER_GATES}test = "{PY} -m pytest -q -p no:cacheprovider"\n',
        },
    )
    code, data, err = verify_json(capsys, tmp_path)
    tests = data["gates"][-1]
    assert (code, data["ok"], tests["status"]) == (1, False, "not_run")
    assert tests["exit_code"] == 5  # the command ran: a gate could run
    assert err == ""


def test_a_passing_lint_with_no_tests_command_is_not_ok(tmp_path, capsys):
    write_files(
        tmp_path,
        {"stepkit.toml": '[commands]\nformat = ""\nlint = "true"\nbuild = ""\ntest = ""\n'},
    )
    code, data, err = verify_json(capsys, tmp_path)
    assert (code, data["ok"]) == (1, False)
    assert [g["status"] for g in data["gates"]] == ["not_run", "pass", "not_run", "not_run"]
    assert err == ""


def test_human_verdict_says_the_tests_gate_did_not_run(tmp_path, capsys):
    write_files(
        tmp_path,
        {"stepkit.toml": '[commands]\nformat = ""\nlint = "true"\nbuild = ""\ntest = ""\n'},
    )
    code = main(["verify", "--project-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "ok —" not in out
    assert "verify: FAILED — tests NOT RUN" in out


def test_a_format_script_that_checks_runs_in_verify(tmp_path, capsys):
    """biome format without --write checks: verify runs the script, as a run does."""
    write_files(
        tmp_path,
        {
            "package.json": json.dumps(
                {"name": "p", "private": True, "scripts": {"format": "biome format ."}}
            ),
            "stepkit.toml": '[commands]\nlint = ""\nbuild = ""\ntest = "true"\n',
        },
    )
    _code, data, _ = verify_json(capsys, tmp_path)
    fmt = data["gates"][0]
    assert fmt["command"] == "npm run format"
    assert fmt["status"] != "not_run"  # biome is not installed here: it ran and could not start


def test_a_make_target_that_checks_runs_in_verify_and_one_that_rewrites_does_not(tmp_path, capsys):
    """A variant the fix was not written for: make's recipe, not a package.json script."""
    write_files(
        tmp_path,
        {
            "Makefile": "fmt:\n\t@ruff format --check .\n\tblack --check .\n",
            "stepkit.toml": '[commands]\nlint = ""\nbuild = ""\ntest = "true"\n',
        },
    )
    _, data, _ = verify_json(capsys, tmp_path)
    assert data["gates"][0]["command"] == "make fmt"
    (tmp_path / "Makefile").write_text("fmt:\n\truff format .\n")
    _code, data, _ = verify_json(capsys, tmp_path)
    fmt = data["gates"][0]
    assert (fmt["command"], fmt["status"]) == (None, "not_run")
    assert "no check mode is known for `make fmt`" in fmt["summary"]
