"""Python detection on the shapes of real projects: a formatter only when the
project formats with it, a lockfile only when git tracks it, a type check of
what the project checks, tox/nox when they do the set-up."""

from __future__ import annotations

import pytest

from stepkit.plugins.projects import machine
from stepkit.testing import resolve_gates
from stepkit.workspace.gate_commands import expand_files
from tests.support.detect import detect_json, detected, need, run_shell
from tests.support.gitrepo import git, init_repo

RUFF_FORMAT = "ruff format --force-exclude {files:.py,.pyi}"
BLACK = "black {files:.py,.pyi}"
LINT_ONLY = '[project]\nname = "demo"\n\n[tool.ruff]\nline-length = 100\n\n[tool.ruff.lint]\nselect = ["E"]\n'


def commands(project):
    return {gate: command for gate, (command, _) in resolve_gates(project).items()}


def test_a_lint_only_ruff_project_gets_no_formatter_from_the_real_cli(stepkit_project):
    project = stepkit_project({"pyproject.toml": LINT_ONLY, "demo/__init__.py": ""})
    gates = detected(project)
    assert (gates["format"], gates["lint"]) == (None, "ruff check")


@pytest.mark.parametrize(
    "files",
    [
        {"pyproject.toml": '[tool.ruff]\n[tool.ruff.format]\nquote-style = "single"\n'},
        {"ruff.toml": "line-length = 90\n[format]\nindent-style = 'tab'\n", "setup.py": ""},
        {
            "pyproject.toml": "[tool.ruff]\n",
            "Makefile": "fmt-check:\n\tuv run ruff format --check .\n",
        },
        {
            "pyproject.toml": "[tool.ruff]\n",
            ".github/workflows/ci.yml": "jobs:\n  lint:\n    steps:\n      - run: ruff format --diff .\n",
        },
        {"pyproject.toml": '[tool.ruff]\n[tool.poe.tasks]\nfmt = "ruff format"\n'},
        {
            "pyproject.toml": "[tool.ruff]\n",
            ".github/workflows/lint.yml": "jobs:\n  l:\n    steps:\n"
            "      - run: hatch fmt --check\n",
        },
    ],
    ids=[
        "format-table",
        "ruff.toml-format",
        "makefile-step",
        "ci-step",
        "poe-task",
        "hatch-fmt",
    ],
)
def test_ruff_formats_the_changed_files_when_the_project_formats_with_it(stepkit_project, files):
    assert commands(stepkit_project(files))["format"] == RUFF_FORMAT


@pytest.mark.parametrize(
    "files",
    [
        {"pyproject.toml": "[tool.black]\nline-length = 88\n"},
        {"setup.py": "", "tox.ini": "[testenv:fmt]\ndeps = black\ncommands = black src tests\n"},
    ],
    ids=["black-table", "tox-env"],
)
def test_black_formats_when_the_project_formats_with_it(stepkit_project, files):
    assert commands(stepkit_project(files))["format"] == BLACK


def test_black_as_a_dependency_alone_is_no_formatter(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[project]\nname = "d"\n[project.optional-dependencies]\n'
            'dev = ["black>=24"]\n'
        }
    )
    assert commands(project)["format"] is None


def test_the_real_ruff_formats_only_the_file_named(stepkit_project):
    need("ruff")
    ugly = "x = {  'a':1 }\n"
    project = stepkit_project(
        {"pyproject.toml": "[tool.ruff.format]\n", "changed.py": ugly, "other.py": ugly}
    )
    command, _ = expand_files(
        commands(project)["format"], ["changed.py", "notes.md"]
    )  # the gate runner's
    done = run_shell(command, project)
    assert done.returncode == 0, done.stderr
    assert (project / "changed.py").read_text() == 'x = {"a": 1}\n'
    assert (project / "other.py").read_text() == ugly


# -- lockfiles ----------------------------------------------------------------

UV_PROJECT = (
    '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n\n'
    "[tool.uv]\npackage = false\n\n[tool.ruff]\n"
)


def test_a_committed_uv_lock_chooses_uv_run_frozen(tmp_path):
    project = init_repo(
        tmp_path / "repo", {"pyproject.toml": UV_PROJECT, "uv.lock": "version = 1\n"}
    )
    assert detected(project)["lint"] == "uv run --frozen python -m ruff check"


def test_an_untracked_uv_lock_is_not_the_projects_choice(tmp_path):
    project = init_repo(
        tmp_path / "repo", {"pyproject.toml": UV_PROJECT, ".gitignore": "uv.lock\n"}
    )
    (project / "uv.lock").write_text(
        "version = 1\n"
    )  # what a `uv run` in a lint target leaves behind
    assert detected(project)["lint"] == "ruff check"
    git(project, "add", "-f", "uv.lock")
    assert detected(project)["lint"] == "uv run --frozen python -m ruff check"


@pytest.mark.slow
def test_uv_run_frozen_leaves_a_committed_stale_uv_lock_unchanged(tmp_path):
    uv = need("uv")
    project = tmp_path / "repo"
    project.mkdir()
    (project / "pyproject.toml").write_text(UV_PROJECT)
    cache = {"UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_OFFLINE": "1"}
    assert run_shell(f"{uv} lock", project, **cache).returncode == 0
    init_repo(project, {})
    (project / "pyproject.toml").write_text(
        UV_PROJECT.replace("0.1.0", "0.2.0")
    )  # the lock is now stale
    locked = (project / "uv.lock").read_bytes()
    prefix = "uv run --frozen "
    assert detected(project)["lint"] == f"{prefix}python -m ruff check"
    done = run_shell(f"{prefix}python -c 'print(42)'", project, **cache)
    assert (done.returncode, done.stdout.strip()) == (0, "42"), done.stderr
    assert (project / "uv.lock").read_bytes() == locked
    unfrozen = run_shell(
        "uv run python -c 'print(42)'", project, **cache
    )  # what stepkit used to run
    assert unfrozen.returncode == 0 and (project / "uv.lock").read_bytes() != locked


# -- the type check -----------------------------------------------------------


def test_mypy_packages_from_its_config(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[tool.mypy]\npackages = ["demo", "demo_cli"]\nstrict = true\n',
            "demo/__init__.py": "",
            "demo_cli/__init__.py": "",
            "docs/conf.py": "",
        }
    )
    assert commands(project)["build"] == "mypy -p demo -p demo_cli"


def test_mypy_checks_the_package_dirs_not_build_or_docs(stepkit_project):
    body = "def f() -> int:\n    return 1\n"
    project = stepkit_project(
        {
            "pyproject.toml": '[project]\nname = "demo"\n[tool.mypy]\nstrict = true\n',
            "src/demo/__init__.py": body,
            "build/lib/demo/__init__.py": body,  # a build's copy: "Duplicate module named 'demo'"
            "docs/conf.py": "project = 1\nproject = 'x'\n",
            "tests/__init__.py": "",
            "tests/test_demo.py": "",
        }
    )
    command = commands(project)["build"]
    assert command == "mypy src/demo"

    need("mypy")
    cache = f"--cache-dir {project.parent / 'mypy-cache'}"
    assert run_shell(f"{command} {cache}", project).returncode == 0
    old = run_shell(f"mypy . {cache}", project)  # what stepkit used to run
    assert old.returncode != 0 and "Duplicate module" in old.stdout + old.stderr


def test_package_dirs_from_the_build_config(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[tool.mypy]\n[tool.poetry]\npackages = [{include = "app", from = "lib"}]\n',
            "lib/app/__init__.py": "",
            "other/__init__.py": "",
        }
    )
    assert commands(project)["build"] == "mypy lib/app"


@pytest.mark.parametrize(
    ("files", "build"),
    [
        ({"Makefile": "mypy:\n\tmypy src\nbuild:\n\tpython -m build\n"}, "make mypy"),
        ({"justfile": "typecheck:\n    mypy src\n"}, "just typecheck"),
        ({"tox.ini": "[testenv:typing]\ndeps = mypy\ncommands = mypy src\n"}, "tox -e typing"),
        (
            {
                "noxfile.py": "import nox\n\n@nox.session\ndef mypy(session):\n    session.run('mypy')\n"
            },
            "nox -s mypy",
        ),
    ],
    ids=["makefile", "justfile", "tox", "nox"],
)
def test_a_target_named_for_the_type_check_wins(stepkit_project, monkeypatch, files, build):
    monkeypatch.setenv(
        "PATH", "/usr/bin:/bin"
    )  # read the justfile, whether or not just is installed
    project = stepkit_project({"pyproject.toml": '[tool.mypy]\nfiles = ["src"]\n', **files})
    assert commands(project)["build"] == build


# -- tox and nox ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tox_ini", "tests"),
    [
        (
            "[tox]\nenv_list = py3{11,12}\n[testenv]\nextras = test\ncommands = pytest {posargs}\n",
            "tox -e py311",
        ),
        (
            "[testenv]\nset_env =\n    DJANGO_SETTINGS_MODULE = demo.settings\ncommands = pytest\n",
            "tox -e py",
        ),
        ("[testenv:tests]\ndeps = -e .[test]\ncommands = pytest\n", "tox -e tests"),
        ("[testenv]\ncommands = python runtests.py\n", "tox -e py"),
        ("[testenv]\ndeps = pytest\ncommands = pytest {posargs}\n", "python -m pytest -rfE"),
    ],
    ids=["extras", "set-env", "editable-extras", "other-command", "plain-pytest"],
)
def test_tox_drives_the_tests_when_it_does_set_up(stepkit_project, monkeypatch, tox_ini, tests):
    monkeypatch.setattr(machine, "version", {"python": "3.11.7"}.get)
    project = stepkit_project({"tox.ini": tox_ini, "setup.py": "", "tests/test_a.py": ""})
    assert commands(project)["tests"] == tests


def test_tox_in_pyproject_native_tables(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[tool.tox.env_run_base]\nextras = ["testing"]\ncommands = [["pytest"]]\n',
            "tests/test_a.py": "",
        }
    )
    assert commands(project)["tests"] == "tox -e py"


#: this machine's Python, as a nox session names it
HERE = ".".join((machine.version("python") or "3.0").split(".")[:2])
NOXFILE = f"""\
import nox


@nox.session(python=["3.9", "{HERE}"])
def tests(session):
    session.install(".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session):
    session.run("ruff", "check")
"""


def test_nox_drives_the_tests_when_its_session_installs_extras_and_detect_says_why(stepkit_project):
    project = stepkit_project(
        {"noxfile.py": NOXFILE, "pyproject.toml": "[tool.ruff]\n", "tests/test_a.py": ""}
    )
    data = detect_json(project)
    # the session's Python list is a matrix: the gate runs the entry of this machine's Python
    assert {g["name"]: g["command"] for g in data["gates"]}["tests"] == f"nox -s tests-{HERE}"
    assert data["notes"] == [
        "tests: `nox -s tests` rather than `python -m pytest -rfE`: it installs the project, which pytest alone would not"
    ]


def test_a_plain_nox_session_keeps_the_plain_runner(stepkit_project):
    plain = (
        "import nox\n\n@nox.session\ndef tests(session):\n    session.install('pytest')\n"
        "    session.run('pytest')\n"
    )
    project = stepkit_project({"noxfile.py": plain, "setup.py": "", "tests/test_a.py": ""})
    assert commands(project)["tests"] == "python -m pytest -rfE"


@pytest.mark.slow
def test_the_real_tox_env_runs_the_projects_set_up(stepkit_project):
    need("tox")
    pytest.importorskip("pytest")
    project = stepkit_project(
        {
            "tox.ini": "[tox]\nskipsdist = true\n[testenv]\nset_env =\n    DEMO_MODE = on\n"
            "commands = python -m pytest -q tests\n",
            "tests/test_env.py": "import os\n\ndef test_mode():\n    assert os.environ['DEMO_MODE'] == 'on'\n",
        }
    )
    command = commands(project)["tests"]
    assert command == "tox -e py"
    done = run_shell(f"{command} --sitepackages", project)  # the venv's pytest, no download
    assert done.returncode == 0, done.stdout[-2000:]
    assert (
        run_shell("python -m pytest -q tests", project).returncode != 0
    )  # the plain runner misses it


# -- pytest's summary -----------------------------------------------------------


def test_rfe_names_failing_ids_with_their_file_even_under_quiet_addopts(stepkit_project):
    pytest.importorskip("pytest")
    project = stepkit_project(
        {
            "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-qq --tb=no -rN -p no:cacheprovider"\n',
            "tests/test_a.py": "def test_fails():\n    assert 0\n\ndef test_ok():\n    pass\n",
        }
    )
    command = commands(project)["tests"]
    assert command == "python -m pytest -rfE"
    done = run_shell(command, project)
    assert done.returncode == 1
    assert "FAILED tests/test_a.py::test_fails" in done.stdout


def test_a_comment_naming_a_formatter_does_not_choose_it(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": "[tool.ruff]\n",
            "tox.ini": "[flake8]\nextend-ignore = E203  # black compat\n",
            "Makefile": "# ruff format is not used here yet\nlint:\n\truff check .\n",
        }
    )
    assert commands(project)["format"] is None


@pytest.mark.parametrize(
    ("hooks", "format_", "lint"),
    [
        (
            (
                "- repo: https://github.com/astral-sh/ruff-pre-commit\n  rev: v0.6.0\n"
                "  hooks:\n  - id: ruff\n  - id: ruff-format\n"
            ),
            "pre-commit run ruff-format --files {files}",
            "pre-commit run ruff --all-files",
        ),
        (
            "- repo: https://github.com/psf/black\n  rev: 24.1.0\n  hooks:\n  - id: black\n",
            "pre-commit run black --files {files}",
            "ruff check",
        ),
    ],
    ids=["ruff-pre-commit", "black"],
)
def test_a_formatter_pre_commit_hook_is_run_through_pre_commit(
    stepkit_project, hooks, format_, lint
):
    """The hook pins the formatter's version and arguments: the gate runs the hook, on the
    changed files only (pre-commit picks the ones the hook's types match)."""
    project = stepkit_project(
        {"pyproject.toml": "[tool.ruff]\n", ".pre-commit-config.yaml": "repos:\n" + hooks}
    )
    gates = commands(project)
    assert (gates["format"], gates["lint"]) == (format_, lint)
    command, _ = expand_files(gates["format"], ["changed.py", "README.md"])
    assert command == format_.replace("{files}", "README.md changed.py")
