"""``stepkit detect``: project types, each gate's command and the plugin that chose it."""

import json

from stepkit.cli import main

pytest_plugins = ["stepkit.testing"]

PY = "stepkit.plugins.projects.python"
TR = "stepkit.plugins.projects.taskrunners"
MIXED = {
    "Makefile": "test:\n\tpython -m pytest\n",
    "pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff.format]\n',
}


def run_detect(capsys, *argv):
    code = main(["detect", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_names_types_commands_and_plugins(stepkit_project, capsys):
    project = stepkit_project(MIXED)
    code, out, _ = run_detect(capsys, "--project-dir", str(project), "--json")
    assert code == 0
    assert json.loads(out) == {
        "project_dir": str(project.resolve()),
        "project_types": ["make", "python"],
        "gates": [
            {
                "name": "format",
                "command": "ruff format --force-exclude {files:.py,.pyi}",
                "plugin": PY,
                "source": None,
                "fault": None,
                "candidates": [],
            },
            {"name": "lint", "command": "ruff check", "plugin": PY, "source": None, "fault": None}
            | {"candidates": []},
            {"name": "build", "command": None, "plugin": None, "source": None, "fault": None}
            | {"candidates": []},
            {"name": "tests", "command": "make test", "plugin": TR, "source": None, "fault": None}
            | {"candidates": []},
        ],
        "tool_dirs": [],
        "notes": [],
        "load_errors": {},
        "unsupported": [],
        "order": None,
    }


def test_text_shows_each_gate_and_says_not_run_plainly(stepkit_project, capsys):
    project = stepkit_project(MIXED)
    code, out, _ = run_detect(capsys, "--project-dir", str(project))
    lines = out.splitlines()
    assert code == 0
    assert lines[1].split() == ["types:", "make,", "python", "(primary:", "make)"]
    assert lines[2].split() == [
        "format",
        "ruff",
        "format",
        "--force-exclude",
        "{files:.py,.pyi}",
        f"[{PY}]",
    ]
    assert " ".join(lines[4].split()) == "build no command — this gate will be NOT RUN"
    assert lines[5].split() == ["tests", "make", "test", f"[{TR}]"]


def test_a_gate_switched_off_by_config_names_the_override(stepkit_project, capsys):
    project = stepkit_project({**MIXED, "stepkit.toml": '[commands]\ntest = ""\n'})
    code, out, _ = run_detect(capsys, "--project-dir", str(project), "--json")
    tests = json.loads(out)["gates"][3]
    assert (code, tests) == (
        0,
        {
            "name": "tests",
            "command": None,
            "plugin": "stepkit.plugins.overrides",
            "source": None,
            "fault": None,
            "candidates": [],
        },
    )


def test_disabling_a_builtin_with_dash_p(stepkit_project, capsys):
    project = stepkit_project({**MIXED, "tests/test_a.py": ""})
    code, out, _ = run_detect(
        capsys, "--project-dir", str(project), "--json", "-p", "no:taskrunners"
    )
    data = json.loads(out)
    assert code == 0
    assert data["project_types"] == ["python"]
    assert data["gates"][3] == {
        "name": "tests",
        "command": "python -m pytest -rfE",
        "plugin": PY,
        "source": None,
        "fault": None,
        "candidates": [],
    }


def test_nothing_detected(stepkit_project, capsys):
    project = stepkit_project({"README.md": "hi\n"})
    code, out, _ = run_detect(capsys, "--project-dir", str(project))
    assert code == 0
    assert "types:   none detected" in out
    assert out.count("NOT RUN") == 4


def test_missing_project_dir_is_a_one_line_usage_error(tmp_path, capsys):
    code, out, err = run_detect(capsys, "--project-dir", str(tmp_path / "nope"))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"stepkit: error: project dir {tmp_path / 'nope'} is not a directory"
    ]


def test_a_failing_stepconf_is_a_one_line_plugin_error(stepkit_project, capsys):
    project = stepkit_project({"stepconf.py": "import nonexistent_module_xyz\n"})
    assert main(["trust", "--project-dir", str(project)]) == 0  # no first-use note in the way
    capsys.readouterr()
    code, _, err = run_detect(capsys, "--project-dir", str(project))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "stepconf.py failed to import: ModuleNotFoundError" in err
