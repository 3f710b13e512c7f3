"""Python plugin: pytest, ruff/black, mypy/pyright — only what the project uses."""

import pytest

from stepkit.testing import resolve_gates

PY = "stepkit.plugins.projects.python"


def commands(project):
    return {gate: command for gate, (command, _) in resolve_gates(project).items()}


def test_a_lint_only_ruff_table_gets_ruff_check_and_no_formatter(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff]\nline-length = 100\n\n'
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        }
    )
    assert resolve_gates(project) == {
        "format": (None, None),
        "lint": ("ruff check", PY),
        "build": (None, None),
        "tests": ("python -m pytest -rfE", PY),
    }


def test_a_bare_project_gets_nothing_guessed(stepkit_project):
    project = stepkit_project({"pyproject.toml": '[project]\nname = "demo"\n', "demo.py": ""})
    assert commands(project) == {"format": None, "lint": None, "build": None, "tests": None}


@pytest.mark.parametrize(
    "files",
    [
        {"tests/test_x.py": ""},
        {"test/test_x.py": ""},
        {"pytest.ini": "[pytest]\n"},
        {"conftest.py": ""},
        {"tox.ini": "[pytest]\naddopts = -q\n"},
        {"setup.cfg": "[tool:pytest]\naddopts = -q\n"},
        {"requirements-dev.txt": "# dev tools\n-r requirements.txt\npytest>=8\n"},
    ],
    ids=["tests-dir", "test-dir", "pytest.ini", "conftest", "tox.ini", "setup.cfg", "requirements"],
)
def test_pytest_signals(stepkit_project, files):
    project = stepkit_project({"setup.py": "from setuptools import setup\nsetup()\n", **files})
    assert commands(project)["tests"] == "python -m pytest -rfE"


@pytest.mark.parametrize(
    "files",
    [
        {"ruff.toml": "line-length = 90\n"},
        {".ruff.toml": "line-length = 90\n"},
        {
            "pyproject.toml": '[project]\nname = "d"\n[dependency-groups]\ndev = ["Ruff>=0.5", {include-group = "x"}]\n'
        },
        {
            "pyproject.toml": '[project]\nname = "d"\n[project.optional-dependencies]\ndev = ["ruff"]\n'
        },
        {"pyproject.toml": '[tool.poetry.group.dev.dependencies]\nruff = "^0.5"\n'},
        {"pyproject.toml": '[tool.uv]\ndev-dependencies = ["ruff==0.6.0"]\n'},
    ],
    ids=["ruff.toml", ".ruff.toml", "dependency-groups", "optional-deps", "poetry-group", "uv-dev"],
)
def test_ruff_signals_choose_the_linter_not_a_formatter(stepkit_project, files):
    gates = commands(stepkit_project({"setup.cfg": "[metadata]\nname = d\n", **files}))
    assert (gates["format"], gates["lint"]) == (None, "ruff check")


def test_black_formats_the_changed_files_when_the_project_uses_it_next_to_ruff(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[tool.black]\nline-length = 88\n[tool.ruff]\nselect = ["E"]\n',
        }
    )
    gates = commands(project)
    assert (gates["format"], gates["lint"]) == ("black {files:.py,.pyi}", "ruff check")


@pytest.mark.parametrize(
    ("lockfile", "prefix"),
    [
        ("uv.lock", "uv run --frozen "),
        ("poetry.lock", "poetry run "),
        ("pdm.lock", "pdm run "),
        ("Pipfile.lock", "pipenv run "),
        ("hatch.toml", "hatch run "),
    ],
)
def test_lockfile_picks_the_runner_outside_git(stepkit_project, lockfile, prefix):
    project = stepkit_project(
        {
            "pyproject.toml": "[tool.ruff.format]\n[tool.mypy]\nstrict = true\n",
            "demo/__init__.py": "",
            "tests/test_a.py": "",
            lockfile: "",
        }
    )
    assert commands(project) == {
        "format": f"{prefix}python -m ruff format --force-exclude {{files:.py,.pyi}}",
        "lint": f"{prefix}python -m ruff check",
        "build": f"{prefix}python -m mypy demo",
        "tests": f"{prefix}python -m pytest -rfE",
    }


@pytest.mark.parametrize(
    ("files", "build"),
    [
        ({"pyproject.toml": '[tool.mypy]\nfiles = ["src"]\n'}, "mypy"),
        ({"mypy.ini": "[mypy]\nfiles = src\n", "setup.py": ""}, "mypy"),
        ({"setup.cfg": "[mypy]\nstrict = True\n"}, "mypy app"),
        ({"requirements.txt": "mypy==1.10\n"}, "mypy app"),
        ({"pyproject.toml": "[tool.pyright]\n"}, "pyright app"),
        ({"pyproject.toml": '[tool.pyright]\ninclude = ["app"]\n'}, "pyright"),
        ({"pyrightconfig.json": "{}", "setup.py": ""}, "pyright app"),
        ({"pyproject.toml": "[tool.mypy]\n[tool.pyright]\n"}, "mypy app"),
    ],
    ids=[
        "mypy-files",
        "mypy.ini-files",
        "setup.cfg",
        "requirements",
        "pyright",
        "pyright-include",
        "pyrightconfig",
        "both",
    ],
)
def test_type_checker_is_the_build_gate(stepkit_project, files, build):
    assert commands(stepkit_project({**files, "app/__init__.py": ""}))["build"] == build


def test_no_type_check_target_no_build_gate(stepkit_project):
    project = stepkit_project({"pyproject.toml": "[tool.mypy]\nstrict = true\n", "script.py": ""})
    assert commands(project)["build"] is None  # never `mypy .`


def test_malformed_pyproject_is_python_without_commands(tmp_path):
    # stepkit itself refuses a malformed pyproject (UsageError), so ask the plugin directly.
    from stepkit.plugins.projects import python

    (tmp_path / "pyproject.toml").write_text("[tool.ruff\n")
    assert python.stepkit_detect_project(tmp_path) == "python"
    assert python.stepkit_gate_command("lint", tmp_path) is None
